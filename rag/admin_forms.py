"""Forms of the admin sites' custom views: ranking-weight tuning with a before/after preview, and
the dry-run simulation. The `Tenant…` forms act for the tenant given to them (the firm console,
console.tuning and console.simulation); their subclasses add the operator site's tenant field
(rag.admin). They validate input only; the views call the services."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from ragsite.exceptions import NotFound
from templates_admin import selectors as template_selectors
from tenants.models import Tenant

from . import services
from .models import RANKING_WEIGHT_MAX, RankingWeights
from .retrieval.ranking import RECENCY_BANDS
from .retrieval.service import MAX_TOP_K

# Enough rows to see an order change; the preview runs a real search for each submit.
MAX_PREVIEW_TOP_K = 20


def _tenant_field() -> forms.ModelChoiceField:
    return forms.ModelChoiceField(queryset=Tenant.objects.filter(is_active=True).order_by("name"))


def _weight_field(label: str, help_text: str = "") -> forms.FloatField:
    return forms.FloatField(label=label, min_value=0.0, max_value=RANKING_WEIGHT_MAX, help_text=help_text)


# Said where the weight is set: raising it does nothing for a corpus of undated documents.
RECENCY_HELP = (
    "Boosts a passage by its document's date: "
    + ", ".join(f"{boost:g} up to {days} days old" for days, boost in RECENCY_BANDS)
    + ", 0 when older. A document without a date gets 0, so this weight does nothing for undated "
    "documents: set their date on the document's page."
)


class TenantRankingTuneForm(forms.Form):
    """Proposed weights of the tenant given to the form (validated and, optionally, normalized as
    `services.ranking_weights_set` would store them) and a sample question to preview them with.
    `cleaned_data["weights"]` holds the resulting `Weights`. The firm console uses it as is (the
    tenant is the session's); `RankingTuneForm` adds a tenant field for the operator site."""

    similarity_weight = _weight_field("Similarity weight")
    recency_weight = _weight_field("Recency weight", RECENCY_HELP)
    trust_weight = _weight_field("Trust weight")
    normalize = forms.BooleanField(
        required=False, help_text="Scale the three weights to sum to 1 (their proportions are kept)."
    )
    question = forms.CharField(
        required=False,
        max_length=settings.RAG_MAX_QUERY_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
        help_text="A sample question: its top results are shown under the current and the proposed weights.",
    )
    top_k = forms.IntegerField(label="Results", min_value=1, max_value=MAX_PREVIEW_TOP_K, initial=5)

    def __init__(self, *args, tenant: Tenant | None = None, question_required: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.tenant = tenant
        self.question_required = question_required

    def chosen_tenant(self, data: dict) -> Tenant | None:
        """The tenant the weights are for: the one given to the form."""
        return self.tenant

    def clean(self):
        data = super().clean()
        if self.question_required and not (data.get("question") or "").strip():
            self.add_error("question", "Enter a sample question to preview the ranking.")
        tenant = self.chosen_tenant(data)
        if tenant is not None and all(data.get(name) is not None for name in RankingWeights.WEIGHT_FIELDS):
            try:
                data["weights"] = services.ranking_weights_clean(
                    tenant=tenant,
                    normalize=data.get("normalize", False),
                    **{name: data[name] for name in RankingWeights.WEIGHT_FIELDS},
                )
            except ValidationError as exc:
                self.add_error(None, exc)
        return data


class RankingTuneForm(TenantRankingTuneForm):
    """The operator site's tuning form: the tenant is chosen in the form."""

    tenant = _tenant_field()
    field_order = ["tenant"]

    def chosen_tenant(self, data: dict) -> Tenant | None:
        return data.get("tenant")


class TenantSimulationForm(forms.Form):
    """The inputs of a dry run for the tenant given to the form: question, template and top_k (the
    pipeline validates the question itself, as it does for POST /admin/simulate). The firm console
    uses it as is; `SimulationForm` adds a tenant field for the operator site."""

    question = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}))
    template_id = forms.ChoiceField(
        label="Template",
        required=False,
        help_text="A built-in, or one of your firm's own templates (which shadows a built-in of the "
        "same id). Default: the firm's default template.",
    )
    top_k = forms.IntegerField(
        min_value=1, max_value=MAX_TOP_K, initial=settings.RAG_DEFAULT_TOP_K, label="Top k"
    )

    def __init__(self, *args, tenant: Tenant | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.tenant = tenant
        self.fields["template_id"].choices = self.template_choices()

    def template_choices(self) -> list:
        """The ids of the templates the tenant sees (its own and the built-ins it has not overridden)."""
        ids = template_selectors.template_list(tenant=self.tenant).values_list("template_id", flat=True)
        return [("", "Default"), *((template_id, template_id) for template_id in ids)]

    def chosen_tenant(self, data: dict) -> Tenant | None:
        """The tenant the dry run is for: the one given to the form."""
        return self.tenant

    def clean(self):
        data = super().clean()
        tenant, template_id = self.chosen_tenant(data), data.get("template_id")
        if tenant is not None and template_id:
            try:
                template_selectors.template_get(tenant=tenant, template_id=template_id)
            except NotFound:
                self.add_error(
                    "template_id", f"{template_id!r} is neither a built-in nor a template of {tenant}."
                )
        return data

    def options(self) -> dict:
        """The pipeline options of a valid form (an empty template means the default)."""
        data = self.cleaned_data
        options = {"top_k": data["top_k"]}
        if data.get("template_id"):
            options["template_id"] = data["template_id"]
        return options


class SimulationForm(TenantSimulationForm):
    """The operator site's dry-run form: the tenant is chosen in the form, the template among every
    tenant's."""

    tenant = _tenant_field()
    field_order = ["tenant"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template_id"].help_text = (
            "A built-in, or one of the chosen tenant's own templates (which shadows a built-in "
            "of the same id). Default: the tenant's default template."
        )

    def template_choices(self) -> list:
        """The template ids grouped by owner: the built-ins, then each tenant's own."""
        groups: dict[str, list[tuple[str, str]]] = {}
        for template in template_selectors.template_list_all():
            # The slug too: two tenants may share a name.
            owner = "Built-in" if template.is_builtin else f"{template.tenant.name} ({template.tenant.slug})"
            groups.setdefault(owner, []).append((template.template_id, template.template_id))
        builtin = groups.pop("Built-in", [])
        return [("", "Default"), ("Built-in", builtin), *sorted(groups.items())]

    def chosen_tenant(self, data: dict) -> Tenant | None:
        return data.get("tenant")
