"""The firm's record of answers exported (DOCX memos, text copied with citations): read-only."""

from __future__ import annotations

from django.contrib import admin

from rag.models import AnswerExport
from rag.selectors import audit_list, audit_outside_walls, walled_case_ids, walled_request_ids
from tenants.selectors import owned_list

from .admins import one_line
from .scoped import PageAnnotatedChangeList, ReadOnlyTenantAdmin, asker
from .site import site


@admin.register(AnswerExport, site=site)
class ConsoleAnswerExportAdmin(ReadOnlyTenantAdmin):
    """Who took which answers out of the app, when and how; rows are never edited."""

    list_display = ["created_at", "exported_by", "format", "questions", "answers", "conversation_id"]
    list_filter = ["format", "created_at"]
    date_hierarchy = "created_at"
    search_fields = ["conversation_id"]
    fields = ["created_at", "user", "api_key_prefix", "format", "questions", "request_ids", "conversation_id"]
    readonly_fields = fields

    def tenant_queryset(self, request):
        """The firm's exports without those holding an answer about a case walled off from the
        admin: a walled matter's work product is seen only on the wall (docs/reliability.md)."""
        tenant = self.active_tenant(request)
        exports = owned_list(AnswerExport, tenant=tenant).select_related("user")
        walled = walled_request_ids(
            tenant=tenant, hidden_cases=walled_case_ids(tenant=tenant, user_id=request.user.pk)
        )
        if not walled:
            return exports
        behind = [
            pk for pk, ids in exports.values_list("pk", "request_ids") if walled.intersection(ids or ())
        ]
        return exports.exclude(pk__in=behind)

    def get_changelist(self, request, **kwargs):
        return PageAnnotatedChangeList

    def annotate_page(self, request, rows: list[AnswerExport]) -> None:
        """The questions of each export's answers, read from the audit log as the admin may read it
        (questions about a case walled off from them are left out)."""
        tenant = self.active_tenant(request)
        wanted = {pk for row in rows for pk in row.request_ids or () if isinstance(pk, str)}
        audit = audit_outside_walls(
            audit_list(tenant=tenant).filter(request_id__in=wanted),
            walled_case_ids(tenant=tenant, user_id=request.user.pk),
        )
        asked = dict(audit.order_by("created_at").values_list("request_id", "query"))
        for row in rows:
            row.asked = [asked[request_id] for request_id in row.request_ids or () if request_id in asked]

    def get_object(self, request, object_id, from_field=None):
        row = super().get_object(request, object_id, from_field)
        self.annotate_page(request, [row])
        return row

    @admin.display(description="Questions")
    def questions(self, obj):
        """The exported answers' questions, each cut to one line's worth."""
        return " · ".join(one_line(text) for text in getattr(obj, "asked", ())) or "-"

    @admin.display(description="Exported by")
    def exported_by(self, obj):
        return asker(obj)

    @admin.display(description="Answers")
    def answers(self, obj):
        return len(obj.request_ids)
