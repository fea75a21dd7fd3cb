"""Exports of a caller's own answers, recorded (`AnswerExport`) as they leave the app."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.utils.text import slugify

from rag.models import AnswerExport, AuditStatus, ExportFormat
from rag.queries import selectors as query_selectors
from rag.queries.caller import Caller
from rag.queries.withheld import checked_rows
from ragsite.exceptions import NotFound

from .docx_memo import memo_docx
from .memo import memo_entry, memo_text

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
# Failed questions and dry runs have no answer to export.
EXPORTABLE = (AuditStatus.ANSWERED, AuditStatus.NOT_FOUND)


@dataclass(frozen=True)
class ExportFile:
    filename: str
    content_type: str
    content: bytes


def _rows(*, caller: Caller, request_id: str | None, conversation_id: str | None) -> list:
    if request_id is not None:
        rows = [query_selectors.query_history_get(tenant=caller.tenant, caller=caller, request_id=request_id)]
    else:
        rows = list(
            query_selectors.query_history_list(
                tenant=caller.tenant, caller=caller, conversation_id=conversation_id
            )
            .defer(None)
            .order_by("created_at", "pk")
        )
    # Re-checked now: a walled-off answer is left out, a withheld one exports its notice only.
    rows = [row for row in checked_rows(caller, rows) if row.status in EXPORTABLE]
    if not rows:
        raise NotFound("No answer of yours to export here.")
    return rows


def _author(caller: Caller) -> str:
    if caller.user_id is None:
        return f"API key {caller.api_key_prefix}"
    user = get_user_model().objects.filter(pk=caller.user_id).first()
    return (user.get_full_name() or user.get_username()) if user else "unknown user"


def answers_export(
    *, caller: Caller, fmt: str, request_id: str | None = None, conversation_id: str | None = None
) -> ExportFile:
    """The caller's answer `request_id`, or every answer of their conversation `conversation_id`,
    as a DOCX memo or text with citations; recorded as an `AnswerExport` of the caller's tenant.
    Another caller's (or tenant's) answer is "not found", as in the query history."""
    if fmt not in ExportFormat.values:
        raise NotFound(f"No export format {fmt!r}.")
    rows = _rows(caller=caller, request_id=request_id, conversation_id=conversation_id)
    entries = [memo_entry(row) for row in rows]
    stem = slugify(rows[0].query)[:60] or "answer"
    if fmt == ExportFormat.DOCX:
        title = "Research memo" if len(rows) == 1 else "Research memo: conversation"
        content = memo_docx(entries, firm=caller.tenant.name, author=_author(caller), title=title)
        file = ExportFile(f"memo-{stem}.docx", DOCX_TYPE, content)
    else:
        file = ExportFile(f"answer-{stem}.txt", "text/plain; charset=utf-8", memo_text(entries).encode())
    AnswerExport.objects.create(
        tenant=caller.tenant,
        user_id=caller.user_id,
        api_key_prefix=caller.api_key_prefix,
        format=fmt,
        request_ids=[row.request_id for row in rows],
        conversation_id=conversation_id or rows[0].conversation_id,
    )
    return file
