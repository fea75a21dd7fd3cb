"""The firm's record of answers exported (DOCX memos, text copied with citations): read-only."""

from __future__ import annotations

from django.contrib import admin

from rag.models import AnswerExport
from tenants.selectors import owned_list

from .scoped import ReadOnlyTenantAdmin, asker
from .site import site


@admin.register(AnswerExport, site=site)
class ConsoleAnswerExportAdmin(ReadOnlyTenantAdmin):
    """Who took which answers out of the app, when and how; rows are never edited."""

    list_display = ["created_at", "exported_by", "format", "answers", "conversation_id"]
    list_filter = ["format", "created_at"]
    date_hierarchy = "created_at"
    search_fields = ["conversation_id"]
    fields = ["created_at", "user", "api_key_prefix", "format", "request_ids", "conversation_id"]
    readonly_fields = fields

    def tenant_queryset(self, request):
        return owned_list(AnswerExport, tenant=self.active_tenant(request)).select_related("user")

    @admin.display(description="Exported by")
    def exported_by(self, obj):
        return asker(obj)

    @admin.display(description="Answers")
    def answers(self, obj):
        return len(obj.request_ids)
