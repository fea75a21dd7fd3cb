"""Admin operations (orchestration spec, "Admin Controls" and "Observability"), admin role: the
dry-run simulation, the tenant's ranking weights, its Prometheus metrics and its audit trail."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response

from rag import selectors, services
from rag.api.common import AdminApiView, acting_user, error_response, page_serializer, paginated
from rag.api.schemas import (
    CitationSerializer,
    DryRunResultSerializer,
    QueryOptionsSerializer,
    QueryRecordSerializer,
    SimulatePromptSerializer,
)
from rag.models import RANKING_WEIGHT_MAX, AuditStatus
from rag.pipeline import metrics
from rag.pipeline.run import reserved_option_errors, simulate_query
from rag.queries.caller import Caller
from rag.retrieval.service import Reader
from ragsite.exceptions import InvalidInput
from ragsite.schema import strict_request
from templates_admin import selectors as template_selectors

# --- Simulation -----------------------------------------------------------------------------------


def _simulation_request(data) -> tuple[object, dict, dict[str, bool]]:
    """Split a simulate body into the question, the pipeline's options (validated by it) and the
    show_prompt/show_context switches of the response."""
    if not isinstance(data, dict):
        raise InvalidInput("The body must be a JSON object.", details={"non_field_errors": "Not an object."})
    options = dict(data)
    options.pop("tenant_id", None)  # TenantApiView has checked it
    question = options.pop("query", None)  # the pipeline checks it, as for POST /query
    shown = {name: options.pop(name, True) for name in ("show_prompt", "show_context")}
    # dry_run is taken as POST /query's (a body sent there can be sent here as is) and does nothing:
    # a simulation is always a dry run.
    switches = {**shown, "dry_run": options.pop("dry_run", True)}
    errors = {
        name: "Must be true or false." for name, value in switches.items() if not isinstance(value, bool)
    }
    errors.update(reserved_option_errors(options))
    if errors:
        raise InvalidInput("Some options are not valid.", details=errors)
    return question, options, shown


class SimulateApi(AdminApiView):
    """POST: run the pipeline up to the prompt without calling the model (spec: "Simulation / Dry
    Run"): the prompt that would be sent, the passages it would cite, the estimated tokens and the
    model that would answer. Takes the query options of POST /query; the run is audited as dry_run."""

    @strict_request
    class InputSerializer(QueryOptionsSerializer):
        """For OpenAPI only: the options go to the pipeline as given, and it refuses unknown ones."""

        query = serializers.CharField(help_text="The question, as for POST /query.")
        show_prompt = serializers.BooleanField(
            default=True, help_text="false: generated_prompt and generated_prompt_detail are null."
        )
        show_context = serializers.BooleanField(default=True, help_text="false: selected_snippets is null.")
        dry_run = serializers.BooleanField(
            required=False,
            help_text="Accepted as in POST /query (true or false) and ignored: a simulation is always "
            "a dry run.",
        )

    class OutputSerializer(DryRunResultSerializer):
        """The dry run's result, with the prompt and passages left out on request."""

        generated_prompt = serializers.CharField(
            allow_null=True,
            help_text="The full prompt text (system, blank line, user); null with show_prompt false.",
        )
        generated_prompt_detail = SimulatePromptSerializer(
            allow_null=True, help_text="The same prompt in its two parts; null with show_prompt false."
        )
        selected_snippets = CitationSerializer(
            many=True, allow_null=True, help_text="The passages in the prompt; null with show_context false."
        )

    @extend_schema(
        request=InputSerializer,
        responses={
            200: OutputSerializer,
            404: error_response("The template_id is not one of yours or a built-in."),
            503: error_response("The document index is unavailable."),
        },
        examples=[
            OpenApiExample(
                "Spec example",
                value={
                    "query": "Test query",
                    "template_id": "legal_analysis_balanced",
                    "top_k": 3,
                    "show_prompt": True,
                    "show_context": True,
                },
                request_only=True,
            )
        ],
    )
    def post(self, request):
        question, options, shown = _simulation_request(request.data)
        credential = self.credential
        result = simulate_query(
            tenant=self.tenant,
            question=question,
            reader=Reader(user_id=request.user.pk, role=credential.role),
            user_id=request.user.pk,
            api_key_prefix=credential.api_key.prefix if credential.api_key else "",
            **options,
        )
        if not shown["show_prompt"]:
            result["generated_prompt"] = result["generated_prompt_detail"] = None
        if not shown["show_context"]:
            result["selected_snippets"] = None
        return Response(self.OutputSerializer(result).data)


# --- Ranking weights ------------------------------------------------------------------------------


class _Weight(serializers.FloatField):
    """A JSON number (not a numeric string or a boolean), finite, in 0..RANKING_WEIGHT_MAX."""

    def __init__(self, **kwargs):
        super().__init__(min_value=0.0, max_value=RANKING_WEIGHT_MAX, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


@extend_schema_field({"type": "boolean", "enum": [True]})
class _TrueField(serializers.BooleanField):
    """Documented as the constant true."""


_WEIGHT_NAMES = ("similarity_weight", "recency_weight", "trust_weight")


class RankingWeightsApi(AdminApiView):
    """GET: the weights the tenant ranks with. POST: set them (optionally normalized to sum to 1),
    or {"reset": true} to go back to the RAG_*_WEIGHT settings. Every write bumps `version`, which
    invalidates cached results ranked with the old weights."""

    class InputSerializer(serializers.Serializer):
        similarity_weight = _Weight(required=False)
        recency_weight = _Weight(required=False)
        trust_weight = _Weight(required=False)
        normalize = serializers.BooleanField(default=False, help_text="Scale the three to sum to 1.")
        reset = serializers.BooleanField(
            default=False, help_text="Use the deployment's settings again (give no weights)."
        )

        def validate(self, attrs):
            given = [name for name in _WEIGHT_NAMES if name in attrs]
            if attrs["reset"]:
                if given:
                    raise serializers.ValidationError({name: "Not with reset." for name in given})
            elif len(given) < len(_WEIGHT_NAMES):
                missing = set(_WEIGHT_NAMES) - set(given)
                raise serializers.ValidationError({name: "This field is required." for name in missing})
            return attrs

    class SetInputSerializer(serializers.Serializer):
        """Set the three weights (for OpenAPI; InputSerializer validates)."""

        similarity_weight = _Weight()
        recency_weight = _Weight()
        trust_weight = _Weight()
        normalize = serializers.BooleanField(default=False, help_text="Scale the three to sum to 1.")

    class ResetInputSerializer(serializers.Serializer):
        """Go back to the deployment's settings (for OpenAPI; InputSerializer validates)."""

        reset = _TrueField()

    class OutputSerializer(serializers.Serializer):
        similarity_weight = serializers.FloatField()
        recency_weight = serializers.FloatField()
        trust_weight = serializers.FloatField()
        version = serializers.IntegerField(help_text="0 until the tenant first sets its own weights.")
        source = serializers.ChoiceField(
            choices=["tenant", "settings"],
            help_text="tenant: the tenant's own row (a reset writes the settings' values into it); "
            "settings: the RAG_*_WEIGHT settings, never changed by this tenant.",
        )
        updated_at = serializers.DateTimeField(allow_null=True)
        updated_by = serializers.CharField(allow_null=True, help_text="null for an API key or never set.")

    @extend_schema(responses=OutputSerializer)
    def get(self, request):
        return Response(self._state())

    @extend_schema(
        request=PolymorphicProxySerializer(
            "RankingWeightsApiInput",
            serializers=[SetInputSerializer, ResetInputSerializer],
            resource_type_field_name=None,
        ),
        responses=OutputSerializer,
        examples=[
            OpenApiExample(
                "Set (spec example)",
                value={"similarity_weight": 0.6, "recency_weight": 0.3, "trust_weight": 0.1},
                request_only=True,
            ),
            OpenApiExample(
                "Set proportions",
                value={"similarity_weight": 6, "recency_weight": 3, "trust_weight": 1, "normalize": True},
                request_only=True,
            ),
            OpenApiExample("Reset", value={"reset": True}, request_only=True),
        ],
    )
    def post(self, request):
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        if data["reset"]:
            services.ranking_weights_reset(tenant=self.tenant, updated_by=acting_user(request))
        else:
            services.ranking_weights_set(
                tenant=self.tenant,
                updated_by=acting_user(request),
                normalize=data["normalize"],
                **{name: data[name] for name in _WEIGHT_NAMES},
            )
        return Response(self._state())

    def _state(self) -> dict:
        row = selectors.ranking_weights_row(tenant=self.tenant)
        if row is None:
            weights = selectors.ranking_weights_get(tenant=self.tenant)
            state = {
                "similarity_weight": weights.similarity,
                "recency_weight": weights.recency,
                "trust_weight": weights.trust,
                "version": 0,
                "source": "settings",
                "updated_at": None,
                "updated_by": None,
            }
        else:
            state = {name: getattr(row, name) for name in _WEIGHT_NAMES}
            state.update(
                version=row.version,
                source="tenant",
                updated_at=row.updated_at,
                updated_by=row.updated_by.username if row.updated_by else None,
            )
        return self.OutputSerializer(state).data


# --- Metrics --------------------------------------------------------------------------------------


class PrometheusTextRenderer(BaseRenderer):
    """Lets content negotiation accept `Accept: text/plain` (Prometheus scrapers); the view answers
    with the text itself, and errors are JSON whatever was accepted."""

    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data if isinstance(data, bytes) else str(data).encode(self.charset)


class MetricsApi(AdminApiView):
    """GET: the spec's `rag_*` Prometheus metrics, as far as they count this tenant's queries: its
    own series and those of its own templates (built-in templates' and the provider/model series
    count every firm's: they are on the operator's /metrics only)."""

    renderer_classes = [JSONRenderer, PrometheusTextRenderer]

    @extend_schema(
        parameters=[OpenApiParameter("format", exclude=True)],  # DRF's ?format= override: not for this view
        responses={
            (200, "text/plain"): OpenApiResponse(
                OpenApiTypes.STR, description=f"Prometheus text format ({metrics.TEXT_CONTENT_TYPE})."
            )
        },
    )
    def get(self, request):
        template_ids = set(
            template_selectors.template_list(tenant=self.tenant)
            .filter(tenant=self.tenant)
            .values_list("template_id", flat=True)
        )
        families = metrics.tenant_view(
            metrics.collect(), tenant_slug=self.tenant.slug, template_ids=template_ids
        )
        return HttpResponse(metrics.exposition(families), content_type=metrics.TEXT_CONTENT_TYPE)

    def handle_exception(self, exc):
        # The error body is JSON even for a client that accepts only text/plain.
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response


# --- Audit trail ----------------------------------------------------------------------------------


class AuditRowSerializer(QueryRecordSerializer):
    id = serializers.IntegerField()
    user = serializers.CharField(source="user.username", allow_null=True, help_text="null for an API key.")
    api_key_prefix = serializers.CharField(help_text='The API key that asked; "" for a user.')
    documents_retrieved = serializers.ListField(child=serializers.IntegerField())
    tokens_used = serializers.IntegerField()
    cost_estimate = serializers.FloatField()
    model_provider = serializers.CharField()
    model = serializers.CharField()


class AuditListApi(AdminApiView):
    """GET: the tenant's audit trail, newest first, narrowed by any of the filters."""

    class FilterSerializer(serializers.Serializer):
        user = serializers.CharField(required=False, max_length=150, help_text="A username.")
        api_key_prefix = serializers.CharField(required=False, max_length=8)
        status = serializers.ChoiceField(choices=AuditStatus.choices, required=False)
        template_id = serializers.CharField(required=False, max_length=100)
        cache_hit = serializers.BooleanField(required=False, help_text="true or false.")
        flag = serializers.ChoiceField(
            choices=selectors.AUDIT_FLAGS, required=False, help_text="Rows where this flag is true."
        )
        error_type = serializers.CharField(required=False, max_length=64, help_text='e.g. "InvalidQuery".')
        since = serializers.DateTimeField(required=False, help_text="ISO 8601; rows created at or after.")
        until = serializers.DateTimeField(required=False, help_text="ISO 8601; rows created before.")
        request_id = serializers.CharField(required=False, max_length=64)
        conversation_id = serializers.CharField(required=False, max_length=100)

    class OutputSerializer(AuditRowSerializer):
        pass

    PageSerializer = page_serializer(OutputSerializer)

    @extend_schema(
        parameters=[
            FilterSerializer,
            OpenApiParameter("page", int, description="1-based page number."),
            OpenApiParameter("page_size", int, description="Rows per page (default 50, at most 200)."),
        ],
        responses={200: PageSerializer, 404: error_response("No such page.")},
        operation_id="v1_rag_admin_audit_list",
    )
    def get(self, request):
        # A plain dict, so an absent boolean stays absent instead of reading as false.
        given = {key: value for key, value in request.query_params.items() if value.strip()}
        filters = self.FilterSerializer(data=given)
        filters.is_valid(raise_exception=True)
        data = dict(filters.validated_data)
        if "user" in data:
            data["username"] = data.pop("user")
        hidden = Caller.from_request(request).hidden_cases
        rows = selectors.audit_search(tenant=self.tenant, hidden_cases=hidden, **data)
        return paginated(self, rows, self.OutputSerializer)


class AuditDetailApi(AdminApiView):
    """GET: one audit row by request id, with the request's options and the response it gave."""

    class OutputSerializer(AuditRowSerializer):
        options = serializers.DictField(help_text="The options as the caller gave them.")
        result = serializers.JSONField(allow_null=True, help_text="The response given; null on failure.")

    @extend_schema(
        parameters=[OpenApiParameter("request_id", str, OpenApiParameter.PATH)],
        responses={200: OutputSerializer, 404: error_response("No audit row with this request id.")},
    )
    def get(self, request, request_id: str):
        hidden = Caller.from_request(request).hidden_cases
        row = selectors.audit_get(tenant=self.tenant, request_id=request_id, hidden_cases=hidden)
        return Response(self.OutputSerializer(row).data)


urlpatterns = [
    path("admin/simulate", SimulateApi.as_view(), name="admin-simulate"),
    path("admin/ranking/weights", RankingWeightsApi.as_view(), name="admin-ranking-weights"),
    path("admin/metrics", MetricsApi.as_view(), name="admin-metrics"),
    path("admin/audit", AuditListApi.as_view(), name="admin-audit-list"),
    path("admin/audit/<str:request_id>", AuditDetailApi.as_view(), name="admin-audit-detail"),
]
