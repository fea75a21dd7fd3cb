"""Admin inspection of cases, documents and chunks, with a reindex action; per-tenant ranking
weights."""

from django.contrib import admin

from . import services
from .ingest import service
from .models import Case, Chunk, Document, RankingWeights
from .retrieval.ranking import Weights


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ["name", "client", "tenant", "created_at"]
    list_filter = ["tenant"]
    search_fields = ["name", "client"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = [
        "title",
        "case",
        "tenant",
        "status",
        "progress",
        "page_count",
        "chunk_count",
        "sensitivity",
    ]
    list_filter = ["tenant", "status", "source_type", "doc_type", "sensitivity"]
    search_fields = ["title", "original_filename", "sha256"]
    readonly_fields = [
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
        "chunk_count",
        "embedding_model",
        "indexed_at",
        "created_at",
    ]
    exclude = ["text"]
    actions = ["reindex"]

    @admin.action(description="Reindex selected documents")
    def reindex(self, request, queryset):
        for document in queryset.select_related("tenant"):
            service.document_reindex(tenant=document.tenant, document_id=document.pk)
        self.message_user(request, f"Queued {queryset.count()} document(s) for reindexing.")


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ["document", "index", "page_start", "page_end", "section_title", "token_count"]
    list_filter = ["tenant", "doc_type"]
    search_fields = ["text"]
    exclude = ["embedding"]

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
