"""Admin inspection of cases, documents and chunks, with a reindex action."""

from django.contrib import admin

from .ingest import service
from .models import Case, Chunk, Document


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
