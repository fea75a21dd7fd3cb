"""Exports of a caller's own answers, recorded (`AnswerExport`) as they leave the app."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.utils.text import slugify

from rag import selectors as rag_selectors
from rag.models import AnswerExport, AuditStatus, Case, Document, ExportFormat
from rag.queries import selectors as query_selectors
from rag.queries.caller import Caller
from rag.queries.withheld import checked_rows
from ragsite.exceptions import NotFound
from tenants.selectors import owned_list

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
    """Who the memo is from: the user's full name (the username only when they have none)."""
    if caller.user_id is None:
        return f"API key {caller.api_key_prefix}"
    user = get_user_model().objects.filter(pk=caller.user_id).first()
    return (user.get_full_name().strip() or user.get_username()) if user else "unknown user"


def _cases(caller: Caller, rows: list) -> list[Case]:
    """The matters the answers are about: the cases each question was scoped to, else (asked across
    the firm) the cases of the documents its answer cites; walled-off cases are left out."""
    case_ids: set[int] = set()
    unscoped_documents: set[int] = set()
    for row in rows:
        filters = (row.options or {}).get("filters") or {}
        scoped = [int(pk) for pk in filters.get("case_ids") or () if str(pk).isdigit()]
        case_ids.update(scoped)
        if not scoped:
            unscoped_documents.update(int(pk) for pk in row.documents_used or () if str(pk).isdigit())
    if unscoped_documents:
        documents = owned_list(Document, tenant=caller.tenant).filter(pk__in=sorted(unscoped_documents))
        case_ids.update(documents.values_list("case_id", flat=True))
    cases = rag_selectors.case_list(tenant=caller.tenant, hidden_cases=caller.hidden_cases)
    return list(cases.filter(pk__in=sorted(case_ids)).order_by("name", "pk"))


def _heading(caller: Caller, rows: list) -> dict:
    """The memo's heading fields: legend, author, matter and client."""
    cases = _cases(caller, rows)
    clients = dict.fromkeys(case.client.strip() for case in cases if case.client.strip())
    return {
        "firm": caller.tenant.name,
        "legend": caller.tenant.memo_legend,
        "author": _author(caller),
        "matter": "; ".join(case.name for case in cases) or "Not limited to one case",
        "client": "; ".join(clients),
    }


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
        content = memo_docx(entries, title=title, **_heading(caller, rows))
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
