"""Admin inspection of cases, documents and chunks, with a reindex action; per-tenant ranking
weights with a tuning view that previews a ranking before saving; the audit log (read-only, CSV
export) with the dry-run simulation.

The custom views are thin: forms in rag.admin_forms validate, and they call the same services the
REST admin endpoints call (rag.services, rag.pipeline.run.simulate_query)."""

from __future__ import annotations

import csv
import json

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Q
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from ragsite.exceptions import TooManyIngestJobs
from tenants.models import Role

from . import admin_pages, selectors, services
from .admin_forms import RankingTuneForm, SimulationForm
from .exports.spreadsheet import csv_safe
from .ingest import service
from .models import AuditLog, Case, Chunk, Document, RankingWeights, TitleSource
from .retrieval.ranking import Weights
from .retrieval.service import Reader


def _planted_chunks(prefix: str = "") -> Q:
    """Chunks whose `injection_flags` are not empty (flagged at ingest), through `prefix`."""
    return ~Q(**{f"{prefix}injection_flags": []})


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    """Every tenant's cases, with their ethical walls shown (a firm's admins set them in the firm
    console, through `case_wall_set`, which checks the members are the firm's)."""

    list_display = ["name", "client", "tenant", "walled", "wall", "created_at"]
    list_filter = ["tenant", "walled"]
    search_fields = ["name", "client"]
    readonly_fields = ["walled", "wall"]
    exclude = ["wall_members"]

    @admin.display(description="On the wall")
    def wall(self, obj):
        return ", ".join(user.get_username() for user in obj.wall_members.all()) if obj.walled else "-"

    def get_readonly_fields(self, request, obj=None):
        # Its documents, chunks and stored files belong to the tenant: moving the case alone would
        # orphan them under the old tenant while the case lists them under the new one.
        return [*self.readonly_fields, "tenant"] if obj else self.readonly_fields

    # Deletes go through the service, as the REST API's do: it bumps the tenant's index version (no
    # cached answer keeps citing the case's documents) and deletes their stored files.
    def delete_model(self, request, obj):
        services.case_delete(tenant=obj.tenant, case_id=obj.pk)

    def delete_queryset(self, request, queryset):
        for case in queryset.select_related("tenant"):
            services.case_delete(tenant=case.tenant, case_id=case.pk)


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    """Documents are added by uploads only. On an existing document, the fields copied to its chunks
    for filtering inside the search SQL (source type, document type, jurisdiction, date) are
    read-only: they are set at upload, and an edit here would not reach the chunks. Sensitivity is
    the exception: a change is copied to the chunks and bumps the index version (rag.signals)."""

    list_display = [
        "title",
        "case",
        "tenant",
        "status",
        "progress",
        "page_count",
        "chunk_count",
        "flagged_passages",
        "sensitivity",
    ]
    list_filter = ["tenant", "status", "source_type", "doc_type", "sensitivity"]
    search_fields = ["title", "original_filename", "sha256"]
    readonly_fields = [
        "title_source",
        "file",
        "mime_type",
        "size_bytes",
        "sha256",
        "status",
        "stage",
        "progress",
        "error_type",
        "error_message",
        "page_count",
        "page_starts",
        "chunk_count",
        "embedding_model",
        "indexed_at",
        "created_at",
    ]
    # Copied to every chunk at ingestion (rag.ingest.service); see the class docstring.
    CHUNK_COPIED_FIELDS = ["source_type", "doc_type", "jurisdiction", "document_date"]
    exclude = ["text"]
    actions = ["reindex"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(flagged_passage_count=Count("chunks", filter=_planted_chunks("chunks__")))
        )

    @admin.display(description="Planted instructions", ordering="flagged_passage_count")
    def flagged_passages(self, obj):
        """How many of the document's passages carry instructions planted for a model."""
        return obj.flagged_passage_count

    def has_add_permission(self, request):
        # Documents come through the upload service (stored, hashed, then ingested); a bare row
        # from this form would have no file, size or hash.
        return False

    def get_readonly_fields(self, request, obj=None):
        # Its chunks and stored file belong to the tenant and case: moving the row would leave
        # them behind, readable by the wrong tenant. The chunks' copied fields would go stale.
        if obj is None:
            return self.readonly_fields
        return [*self.readonly_fields, "tenant", "case", *self.CHUNK_COPIED_FIELDS]

    # Cached answers cite the title, and search filters and routing read the metadata: an edit of
    # either makes them stale, so it bumps the tenant's index version (the answer cache's key).
    ANSWER_CHANGING_FIELDS = ("metadata", "title")

    def save_model(self, request, obj, form, change):
        fields = self.ANSWER_CHANGING_FIELDS
        before = Document.objects.filter(pk=obj.pk).values(*fields).first() if change else None
        if before is not None and before["title"] != obj.title:
            obj.title_source = TitleSource.USER  # reingestion keeps an edited title
        super().save_model(request, obj, form, change)
        # Compared with the stored row: the form's changed_data flags an unchanged JSON field.
        if before is not None and any(before[name] != getattr(obj, name) for name in fields):
            service.bump_index_version(tenant=obj.tenant)

    # Deletes go through the service, as the REST API's do: it bumps the tenant's index version (no
    # cached answer keeps citing the document) and deletes the stored file.
    def delete_model(self, request, obj):
        service.document_delete(tenant=obj.tenant, document_id=obj.pk)

    def delete_queryset(self, request, queryset):
        for document in queryset.select_related("tenant"):
            service.document_delete(tenant=document.tenant, document_id=document.pk)

    @admin.action(description="Reindex selected documents")
    def reindex(self, request, queryset):
        queued = 0
        for document in queryset.select_related("tenant"):
            try:
                service.document_reindex(tenant=document.tenant, document_id=document.pk)
                queued += 1
            except TooManyIngestJobs as exc:  # the tenant's queue is full: say so, go on
                self.message_user(request, f"{document}: {exc.message}", level=messages.WARNING)
        self.message_user(request, f"Queued {queued} document(s) for reindexing.")


class PlantedInstructionsFilter(admin.SimpleListFilter):
    """Chunks flagged at ingest as carrying instructions planted for a model, or not."""

    title = "planted instructions"
    parameter_name = "planted"

    def lookups(self, request, model_admin):
        return [("yes", "Flagged"), ("no", "Not flagged")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(_planted_chunks())
        if self.value() == "no":
            return queryset.exclude(_planted_chunks())
        return queryset


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = [
        "document",
        "index",
        "page_start",
        "page_end",
        "section_title",
        "token_count",
        "planted_instructions",
    ]
    list_filter = ["tenant", "doc_type", PlantedInstructionsFilter]
    list_select_related = ["document"]
    search_fields = ["text"]
    exclude = ["embedding"]

    @admin.display(description="Planted instructions")
    def planted_instructions(self, obj):
        """The shapes of planted instructions found at ingest, or "-"."""
        return ", ".join(obj.injection_flags) or "-"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(RankingWeights)
class RankingWeightsAdmin(admin.ModelAdmin):
    list_display = ["tenant", "similarity_weight", "recency_weight", "trust_weight", "version", "updated_at"]
    list_select_related = ["tenant"]
    fields = [
        "tenant",
        "similarity_weight",
        "recency_weight",
        "trust_weight",
        "version",
        "updated_at",
        "updated_by",
    ]
    readonly_fields = ["version", "updated_at", "updated_by"]
    actions = ["reset_to_settings"]

    def has_delete_permission(self, request, obj=None):
        # Deleting would restart `version` at 0 and let later versions collide in caches; resetting
        # keeps the row and bumps the version (rag.services.ranking_weights_reset).
        return False

    @admin.action(description="Reset selected to the RAG_*_WEIGHT settings")
    def reset_to_settings(self, request, queryset):
        rows = list(queryset.select_related("tenant"))
        for row in rows:
            services.ranking_weights_reset(tenant=row.tenant, updated_by=request.user)
        self.message_user(request, f"Reset {len(rows)} tenant(s) to the default ranking weights.")

    def get_readonly_fields(self, request, obj=None):
        # A row belongs to its tenant for good; moving it would hand one firm's tuning to another.
        return [*self.readonly_fields, "tenant"] if obj else self.readonly_fields

    def get_changeform_initial_data(self, request):
        defaults = Weights.from_settings()
        return {
            **super().get_changeform_initial_data(request),
            "similarity_weight": defaults.similarity,
            "recency_weight": defaults.recency,
            "trust_weight": defaults.trust,
        }

    def save_model(self, request, obj, form, change):
        # Through the service, so an admin edit bumps `version` like any other write.
        saved = services.ranking_weights_set(
            tenant=obj.tenant,
            similarity_weight=obj.similarity_weight,
            recency_weight=obj.recency_weight,
            trust_weight=obj.trust_weight,
            updated_by=request.user,
        )
        # The admin logs and redirects with `obj`: make it the stored row.
        for field in ("pk", "version", "updated_at", "updated_by"):
            setattr(obj, field, getattr(saved, field))
        obj._state.adding = False

    def get_urls(self):
        tune = path(
            "tune/",
            self.admin_site.admin_view(self.tune_view),
            name=f"{self.opts.app_label}_{self.opts.model_name}_tune",
        )
        return [tune, *super().get_urls()]

    def tune_view(self, request):
        """Propose a tenant's weights, preview the ranking of a sample question under its current
        and the proposed weights side by side, and save them only on "Save" (the service validates,
        normalizes and versions them as POST /admin/ranking/weights does)."""
        if not self.has_change_permission(request):
            raise PermissionDenied
        preview = None
        if request.method == "POST":
            saving = "_save" in request.POST
            form = RankingTuneForm(request.POST, question_required=not saving)
            if form.is_valid():
                if saving:
                    return self._tune_save(request, form.cleaned_data)
                preview = self._tune_preview(form)
        else:
            form = RankingTuneForm(initial=self._tune_initial(request))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Tune ranking weights",
            "form": form,
            "preview": preview,
        }
        return TemplateResponse(request, "admin/rag/rankingweights/tune.html", context)

    def _tune_initial(self, request) -> dict:
        tenant = self._tenant_from(request.GET.get("tenant"))
        return {**admin_pages.tune_initial(tenant), **({"tenant": tenant} if tenant else {})}

    @staticmethod
    def _tenant_from(value):
        field = RankingTuneForm.base_fields["tenant"]
        try:
            return field.clean(value) if value else None
        except ValidationError:  # a stale or forged ?tenant= just leaves the field empty
            return None

    def _tune_save(self, request, data):
        tenant = data["tenant"]
        if selectors.ranking_weights_row(tenant=tenant) is None and not self.has_add_permission(request):
            raise PermissionDenied
        admin_pages.tune_save(self, request, tenant=tenant, data=data)
        return redirect(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist")

    def _tune_preview(self, form) -> dict | None:
        return admin_pages.tune_preview(form, tenant=form.cleaned_data["tenant"])

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_tune": self.has_change_permission(request)}
        return super().changelist_view(request, extra_context)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "can_tune": self.has_change_permission(request)}
        return super().changeform_view(request, object_id, form_url, extra_context)


# --- Audit log ------------------------------------------------------------------------------------


class PromptInjectionFilter(admin.SimpleListFilter):
    """Rows whose flags record a prompt injection: in the question, in a retrieved document, or either."""

    title = "prompt injection"
    parameter_name = "injection"

    def lookups(self, request, model_admin):
        return [
            ("any", "Any"),
            ("question", "In the question"),
            ("documents", "In retrieved documents"),
            ("none", "None"),
        ]

    def queryset(self, request, queryset):
        direct = Q(flags__contains={"prompt_injection_detected": True})
        indirect = Q(flags__contains={"indirect_injection_detected": True})
        match self.value():
            case "any":
                return queryset.filter(direct | indirect)
            case "question":
                return queryset.filter(direct)
            case "documents":
                return queryset.filter(indirect)
            case "none":
                return queryset.exclude(direct | indirect)
        return queryset


class HallucinationFilter(admin.SimpleListFilter):
    """Rows whose answer verification found a hallucination, or whose answer needs verification."""

    title = "hallucination"
    parameter_name = "hallucination"

    def lookups(self, request, model_admin):
        return [
            ("detected", "Hallucination detected"),
            ("needs_verification", "Answer needs verification"),
            ("none", "Neither"),
        ]

    def queryset(self, request, queryset):
        detected = Q(flags__contains={"hallucination_detected": True})
        unverified = Q(flags__contains={"needs_verification": True})
        match self.value():
            case "detected":
                return queryset.filter(detected)
            case "needs_verification":
                return queryset.filter(unverified)
            case "none":
                return queryset.exclude(detected | unverified)
        return queryset


class RedactionFilter(admin.SimpleListFilter):
    """Rows whose answer had passages redacted (confidential text the caller may not read)."""

    title = "redactions"
    parameter_name = "redactions"

    def lookups(self, request, model_admin):
        return [("applied", "Redactions applied"), ("none", "None")]

    def queryset(self, request, queryset):
        applied = Q(flags__contains={"redactions_applied": True})
        match self.value():
            case "applied":
                return queryset.filter(applied)
            case "none":
                return queryset.exclude(applied)
        return queryset


class AuditChangeList(ChangeList):
    def get_queryset(self, request, exclude_parameters=None):
        # The list and the CSV never show the request options and response, the largest columns.
        return super().get_queryset(request, exclude_parameters).defer("options", "result")


CSV_COLUMNS = (
    "created_at",
    "tenant",
    "user",
    "api_key_prefix",
    "request_id",
    "status",
    "query",
    "template_id",
    "confidence",
    "latency_ms",
    "cache_hit",
    "flags",
)


def audit_csv_row(row: AuditLog) -> list:
    """One audit row as CSV_COLUMNS, formula-safe."""
    values = [
        row.created_at.isoformat(),
        row.tenant.slug,
        row.user.username if row.user else "",
        row.api_key_prefix,
        row.request_id,
        row.status,
        row.query,
        row.template_id,
        "" if row.confidence is None else row.confidence,
        row.latency_ms,
        "true" if row.cache_hit else "false",
        json.dumps(row.flags, sort_keys=True),
    ]
    return [csv_safe(value) for value in values]


class _Echo:
    """A file-like object whose write() returns the line, so csv.writer can feed a stream."""

    def write(self, value):
        return value


def audit_csv_response(rows) -> StreamingHttpResponse:
    """`rows` (audit log rows) streamed as a CSV attachment, header first."""
    writer = csv.writer(_Echo())
    rows = rows.select_related("tenant", "user").defer("options", "result")

    def lines():
        yield writer.writerow(CSV_COLUMNS)
        for row in rows.iterator(chunk_size=1000):
            yield writer.writerow(audit_csv_row(row))

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    filename = f"audit-log-{timezone.now():%Y%m%d-%H%M%S}.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# An audit row's own fields as both admin sites show them (the operator's adds the tenant and the
# JSON of flags, options and result).
AUDIT_RECORD_FIELDS = [
    "user",
    "api_key_prefix",
    "request_id",
    "conversation_id",
    "status",
    "error_type",
    "query",
    "search_query",
    "template_id",
    "confidence",
    "latency_ms",
    "tokens_used",
    "cost_estimate",
    "model_provider",
    "model",
    "cache_hit",
    "documents_retrieved",
    "documents_used",
]


@admin.register(AuditLog)
class AuditLogAdmin(admin.ModelAdmin):
    """Read-only: audit rows are append-only (the database refuses UPDATEs too)."""

    list_display = [
        "created_at",
        "tenant",
        "caller",
        "status",
        "short_query",
        "template_id",
        "confidence",
        "latency_ms",
        "cache_hit",
        "raised_flags",
    ]
    list_filter = [
        "tenant",
        ("user", admin.RelatedOnlyFieldListFilter),
        "status",
        "cache_hit",
        PromptInjectionFilter,
        HallucinationFilter,
        RedactionFilter,
    ]
    list_select_related = ["tenant", "user"]
    date_hierarchy = "created_at"
    search_fields = ["=request_id", "query"]
    search_help_text = "An exact request id, or words of the question."
    actions = ["export_csv"]
    fields = ["created_at", "tenant", *AUDIT_RECORD_FIELDS, "flags_json", "options_json", "result_json"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_changelist(self, request, **kwargs):
        return AuditChangeList

    @admin.display(description="Caller")
    def caller(self, obj):
        if obj.user_id:
            return obj.user
        return f"key {obj.api_key_prefix}" if obj.api_key_prefix else "-"

    @admin.display(description="Query")
    def short_query(self, obj):
        return obj.query if len(obj.query) <= 80 else obj.query[:79] + "…"

    @admin.display(description="Flags")
    def raised_flags(self, obj):
        raised = [name for name in selectors.AUDIT_FLAGS if name != "cache_hit" and obj.flags.get(name)]
        return ", ".join(raised) or "-"

    @admin.display(description="Flags")
    def flags_json(self, obj):
        return _pretty_json(obj.flags)

    @admin.display(description="Options")
    def options_json(self, obj):
        return _pretty_json(obj.options)

    @admin.display(description="Result")
    def result_json(self, obj):
        return _pretty_json(obj.result)

    @admin.action(description="Export selected as CSV", permissions=["view"])
    def export_csv(self, request, queryset):
        return audit_csv_response(queryset)

    def get_urls(self):
        info = f"{self.opts.app_label}_{self.opts.model_name}"
        return [
            path("export/", self.admin_site.admin_view(self.export_view), name=f"{info}_export"),
            path("simulate/", self.admin_site.admin_view(self.simulate_view), name=f"{info}_simulate"),
            *super().get_urls(),
        ]

    def export_view(self, request):
        """Every row the change list shows for the same query string (filters, search, date), as CSV."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            url = reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist")
            return HttpResponseRedirect(f"{url}?e=1")
        return audit_csv_response(changelist.queryset)

    def has_simulate_permission(self, request) -> bool:
        # The prompt shows passages' text: viewing chunks is needed as well as viewing the audit.
        return self.has_view_permission(request) and request.user.has_perm("rag.view_chunk")

    def simulate_view(self, request):
        """The spec's dry run for a tenant: the prompt that would be sent, the passages in it with
        their scores, the estimated tokens and the model, by the same call as POST /admin/simulate
        (audited as a dry run of this admin user)."""
        if not self.has_simulate_permission(request):
            raise PermissionDenied
        result = None
        form = SimulationForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            # Staff read every document in the admin; the simulation shows what an admin gets.
            reader = Reader(user_id=request.user.pk, role=Role.ADMIN)
            result = admin_pages.simulate(
                form, tenant=form.cleaned_data["tenant"], reader=reader, user_id=request.user.pk
            )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Simulate a query (dry run)",
            "form": form,
            "result": result,
            "raised_flags": admin_pages.raised_flags(result),
        }
        return TemplateResponse(request, "admin/rag/auditlog/simulate.html", context)

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_simulate": self.has_simulate_permission(request)}
        return super().changelist_view(request, extra_context)


def _pretty_json(value):
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False))
