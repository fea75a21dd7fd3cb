"""The firm's ranking weights on the tenant site: the change list shows the one row (if the firm has
tuned its weights) and links to the tune page, where the firm's admin sees the current weights,
proposes new ones, previews a sample question's ranking under both side by side, and saves them or
resets to the defaults.

Writes go through `rag.services` (validated, versioned, `updated_by` the user, as the REST API's
POST /admin/ranking/weights), and are logged in the admin history; the preview logic is the
operator site's (rag.admin_pages). Everything acts for the active tenant: there is no tenant field.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path

from rag import admin_pages, selectors, services
from rag.admin_forms import TenantRankingTuneForm
from rag.models import RankingWeights
from rag.retrieval.service import Reader

from .scoped import ReadOnlyTenantAdmin
from .site import console_credential, site

TUNE_TITLE = "Tune ranking weights"


@admin.register(RankingWeights, site=site)
class ConsoleRankingWeightsAdmin(ReadOnlyTenantAdmin):
    """Read-only rows (at most one: the firm's own weights); every change is made on the tune page."""

    change_list_template = "console/rankingweights/change_list.html"
    list_display = [
        "similarity_weight",
        "recency_weight",
        "trust_weight",
        "version",
        "updated_at",
        "updated_by",
    ]
    list_display_links = ["similarity_weight"]
    fields = ["similarity_weight", "recency_weight", "trust_weight", "version", "updated_at", "updated_by"]
    readonly_fields = fields
    actions = ["reset_to_defaults"]

    def tenant_queryset(self, request):
        return super().tenant_queryset(request).select_related("updated_by")

    # Read-only: the row is created, changed and reset by the tune page only (through the service,
    # which versions it); deleting would restart `version` at 0 and let caches reuse old versions.

    def has_tune_permission(self, request) -> bool:
        return self.admin_site.has_permission(request)

    @admin.action(description="Reset to the default weights", permissions=["tune"])
    def reset_to_defaults(self, request, queryset):
        # The queryset is the change list's (the firm's row at most): it only says whether to act.
        if queryset.exists():
            self._reset(request, self.active_tenant(request))

    def get_urls(self):
        info = f"{self.opts.app_label}_{self.opts.model_name}"
        tune = path("tune/", self.admin_site.admin_view(self.tune_view), name=f"{info}_tune")
        return [tune, *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        tenant = self.active_tenant(request)
        extra_context = {
            **(extra_context or {}),
            "effective_weights": selectors.ranking_weights_get(tenant=tenant),
            "weights_version": selectors.ranking_weights_version(tenant=tenant),
        }
        return super().changelist_view(request, extra_context)

    def tune_view(self, request):
        """GET: the form, filled with the firm's current weights. POST `_preview`: the ranking of the
        sample question under the current and the proposed weights, nothing stored; `_save`: store
        the proposed weights; `_reset`: back to the defaults (the RAG_*_WEIGHT settings)."""
        if not self.has_tune_permission(request):
            raise PermissionDenied
        credential = console_credential(request)
        tenant = credential.tenant
        if request.method == "POST" and "_reset" in request.POST:
            return self._reset(request, tenant)
        preview = None
        if request.method == "POST":
            saving = "_save" in request.POST
            form = TenantRankingTuneForm(request.POST, tenant=tenant, question_required=not saving)
            if form.is_valid():
                if saving:
                    admin_pages.tune_save(self, request, tenant=tenant, data=form.cleaned_data)
                    return redirect(f"{self.admin_site.name}:rag_rankingweights_changelist")
                # The preview reads as its user would: passages they may not read are redacted.
                reader = Reader(user_id=request.user.pk, role=credential.role)
                preview = admin_pages.tune_preview(form, tenant=tenant, reader=reader)
        else:
            form = TenantRankingTuneForm(initial=admin_pages.tune_initial(tenant), tenant=tenant)
        request.current_app = self.admin_site.name
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": TUNE_TITLE,
            "form": form,
            "preview": preview,
            "weights_row": selectors.ranking_weights_row(tenant=tenant),
        }
        return TemplateResponse(request, "console/rankingweights/tune.html", context)

    def _reset(self, request, tenant):
        row = services.ranking_weights_reset(tenant=tenant, updated_by=request.user)
        if row is None:
            self.message_user(request, "Your firm already ranks with the default weights.", messages.INFO)
        else:
            self.log_change(request, row, f"Reset the weights to the defaults (version {row.version}).")
            self.message_user(
                request,
                f"Reset the ranking weights to the defaults (version {row.version}).",
                messages.SUCCESS,
            )
        return redirect(f"{self.admin_site.name}:rag_rankingweights_changelist")
