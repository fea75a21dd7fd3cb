"""Filling a review table's cells: the background job's work (rag.tasks.run_review_table).

A run reads for the reader who started it (`ReviewTable.run_role` and `run_by`): only the
documents of the case they may read are checked (confidential documents they may not read and
walled cases are outside their visibility, as in search). Presence columns are judged by
`rag.review.classify.review`, one call per column for every document to (re)compute; value columns
and typed questions are asked of each document through the pipeline (`run_query`, scoped to the
one document). Progress (`done` of `total` cells) is saved after every column of presence cells
and every single pipeline cell, so a poller sees it move from the start.

Only what changed is computed again: a document's cells are kept while its `indexed_at` is the one
they were computed from and they hold no error; documents added to the case get cells, and the
cells of documents no longer in it (or no longer visible to the runner) are dropped.

A cancelled table (`status` set to cancelled) or a newer run (`run` moved on) stops the job at the
next cell; the cells written so far stay, and a re-run completes the rest.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_right
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from rag.models import Chunk, Document, DocumentStatus
from rag.pipeline.run import run_query
from rag.retrieval import snippets
from rag.retrieval.filters import SearchFilters, Visibility
from rag.retrieval.service import Reader, reader_visibility
from rag.review.classify import Verdict, review
from ragsite.exceptions import ApplicationError
from tenants.selectors import owned_list

from . import recovery
from .models import UNREVIEWED, ReviewCell, ReviewStatus, ReviewTable
from .specs import TableColumn, is_presence, table_columns

logger = logging.getLogger(__name__)

REVIEW_BELOW = 0.7  # a cell whose confidence is under this is marked for a human
_MARKERS = re.compile(r"\s*\[\d+(?:\s*[,\u2013-]\s*\d+)*\]")  # the answer's citation markers, "[1]", "[1, 2]"
NOT_INDEXED = "Not indexed yet: re-run the table once it is."
FAILED_DOCUMENT = "The document could not be read."
NOT_CHECKED = "The document could not be checked for this column."


class Stopped(Exception):
    """The table was cancelled, or a newer run took over."""


@dataclass(frozen=True)
class _Document:
    pk: int
    status: str
    indexed_at: object
    page_starts: list


def reader_of(table: ReviewTable) -> Reader:
    return Reader(user_id=table.run_by_id, role=table.run_role)


def visible_documents(table: ReviewTable, visibility: Visibility):
    """The case's documents `visibility` lets through (a walled case's: none)."""
    return (
        owned_list(Document, tenant=table.tenant)
        .filter(visibility.as_document_q(), case_id=table.case_id)
        .order_by("pk")
    )


def table_fill(*, table_id: int, run: int) -> str:
    """Run `run` of the table; returns its final status ("stale" when another run or a cancel
    took it first)."""
    claimed = ReviewTable.objects.filter(
        pk=table_id, run=run, status__in=(ReviewStatus.QUEUED, ReviewStatus.RUNNING)
    ).update(status=ReviewStatus.RUNNING, started_at=timezone.now(), finished_at=None, error=None)
    if not claimed:
        return "stale"
    table = ReviewTable.objects.select_related("tenant", "case").get(pk=table_id)
    recovery.attempt_started(table_id, run)
    try:
        with recovery.heartbeat(table_id, run):
            _fill(table, run)
    except Stopped:
        return ReviewTable.objects.filter(pk=table_id).values_list("status", flat=True).first() or "deleted"
    except Exception as exc:
        logger.exception("review table failed", extra={"table_id": table_id})
        error = (
            {"error_type": exc.error_type, "message": exc.message}
            if isinstance(exc, ApplicationError)
            else {"error_type": "InternalError", "message": "An unexpected error occurred."}
        )
        _running(table_id, run).update(status=ReviewStatus.FAILED, error=error, finished_at=timezone.now())
        return ReviewStatus.FAILED
    _running(table_id, run).update(status=ReviewStatus.DONE, finished_at=timezone.now())
    recovery.attempts_reset(table_id, run)
    return ReviewStatus.DONE


def _running(table_id: int, run: int):
    return ReviewTable.objects.filter(pk=table_id, run=run, status=ReviewStatus.RUNNING)


def _progress(table: ReviewTable, run: int, **values) -> None:
    """Save progress; `Stopped` when the table was cancelled, deleted or re-run meanwhile."""
    if not _running(table.pk, run).update(updated_at=timezone.now(), **values):
        raise Stopped


def _fill(table: ReviewTable, run: int) -> None:
    tenant = table.tenant
    reader = reader_of(table)
    visibility = reader_visibility(tenant=tenant, reader=reader)
    documents = {
        row[0]: _Document(*row)
        for row in visible_documents(table, visibility).values_list(
            "pk", "status", "indexed_at", "page_starts"
        )
    }
    columns = table_columns(table.columns)
    cells = owned_list(ReviewCell, tenant=tenant).filter(table=table)
    cells.exclude(document_id__in=list(documents)).delete()  # removed, moved or no longer visible
    kept = {
        (document_id, index)
        for document_id, index, indexed_at in cells.filter(error="").values_list(
            "document_id", "column_index", "document_indexed_at"
        )
        if document_id in documents and indexed_at == documents[document_id].indexed_at
    }
    todo = {column.index: [pk for pk in documents if (pk, column.index) not in kept] for column in columns}
    total = len(documents) * len(columns)
    _progress(table, run, total=total, done=total - sum(len(ids) for ids in todo.values()))

    for column in columns:
        ids = todo[column.index]
        unready = [pk for pk in ids if documents[pk].status != DocumentStatus.READY]
        for pk in unready:
            _save(table, documents[pk], column, _unready_cell(documents[pk]))
        if unready:
            _progress(table, run, done=F("done") + len(unready))
        ready = [pk for pk in ids if documents[pk].status == DocumentStatus.READY]
        if not ready:
            continue
        if is_presence(column):
            _presence(table, run, column, visibility, [documents[pk] for pk in ready], len(documents))
        else:
            for pk in ready:
                _save(table, documents[pk], column, _asked(table, reader, column, documents[pk]))
                _progress(table, run, done=F("done") + 1)


def _unready_cell(document: _Document) -> dict:
    failed = document.status == DocumentStatus.FAILED
    return {"error": FAILED_DOCUMENT if failed else NOT_INDEXED, "needs_review": True}


def _presence(table, run, column: TableColumn, visibility, documents: list[_Document], in_case: int) -> None:
    filters = SearchFilters(case_ids=(table.case_id,))
    if len(documents) < in_case:  # only the documents to compute again
        filters = SearchFilters(case_ids=(table.case_id,), document_ids=tuple(d.pk for d in documents))
    try:
        judged = review(tenant=table.tenant, filters=filters.seen_by(visibility), column=column.builtin)
    except ApplicationError as exc:
        for document in documents:
            _save(table, document, column, {"error": exc.message[:300], "needs_review": True})
        _progress(table, run, done=F("done") + len(documents))
        return
    verdicts = {verdict.document_id: verdict for verdict in judged.verdicts}
    chunks = _chunks(table, [v.chunk_id for v in verdicts.values() if v.present and v.chunk_id])
    for document in documents:
        verdict = verdicts.get(document.pk)
        if verdict is None or judged.model == "none":
            cell = {"error": NOT_CHECKED, "needs_review": True}
        else:
            cell = _verdict_cell(verdict, chunks.get(verdict.chunk_id), document)
        _save(table, document, column, cell)
    _progress(table, run, done=F("done") + len(documents))


def _chunks(table: ReviewTable, ids: list[int]) -> dict[int, tuple[int, int, str]]:
    rows = owned_list(Chunk, tenant=table.tenant).filter(pk__in=ids)
    return {pk: (start, page, text) for pk, start, page, text in rows.values_list(
        "pk", "char_start", "page_start", "text")}  # fmt: skip


def _verdict_cell(verdict: Verdict, chunk, document: _Document) -> dict:
    if not verdict.present:
        confidence = 1.0 - verdict.probability
        return {"answer": "No", "confidence": confidence, "needs_review": confidence < REVIEW_BELOW}
    cell = {"answer": "Yes", "confidence": verdict.probability, "chunk_id": verdict.chunk_id}
    if chunk is None or verdict.window is None:  # a Yes without its quote needs a human
        return {**cell, "needs_review": True}
    start, page, text = chunk
    window = verdict.window
    char_start = start + window.start
    return {
        **cell,
        "quote": text[window.start : window.end],
        "char_start": char_start,
        "char_end": start + window.end,
        "page": _page(document, char_start, page),
        "needs_review": verdict.probability < REVIEW_BELOW,
    }


def _page(document: _Document, offset: int, fallback: int) -> int:
    starts = document.page_starts or []
    return max(bisect_right(starts, offset), 1) if starts else fallback


def _asked(table: ReviewTable, reader: Reader, column: TableColumn, document: _Document) -> dict:
    """A value column or typed question asked of one document through the pipeline."""
    try:
        result = run_query(
            tenant=table.tenant,
            question=column.question,
            reader=reader,
            user_id=table.run_by_id,
            api_key_prefix=table.run_api_key_prefix,
            filters={"document_ids": [document.pk]},
            use_cache=True,
            origin="review_table",
        ).result
    except ApplicationError as exc:
        return {"error": exc.message[:300], "needs_review": True}
    answer = result.get("answer") or result.get("message") or ""
    confidence = result.get("confidence_score")
    cell = {"answer": direct_part(_MARKERS.sub("", answer).strip()), "confidence": confidence}
    cited = [c for c in result.get("citations") or () if c.get("document_id") == document.pk]
    if not result.get("answer") or not cited:
        return {**cell, "needs_review": True}
    citation = cited[0]
    char_start, char_end = citation.get("char_start"), citation.get("char_end")
    quote = _text_between(table, document, citation.get("chunk_id"), char_start, char_end)
    return {
        **cell,
        "quote": quote if quote is not None else citation.get("snippet") or "",
        "chunk_id": citation.get("chunk_id"),
        "char_start": char_start if quote is not None else None,
        "char_end": char_end if quote is not None else None,
        "page": citation.get("page"),
        "needs_review": confidence is None or confidence < REVIEW_BELOW,
    }


def direct_part(answer: str) -> str:
    """What a cell shows of an answer: its first sentence when that states the answer itself
    ("The laws of Massachusetts govern.", "31 October 2024: 5 years from the Effective Date, …", "Yes.")
    with the quote in the cell's own field; the whole answer when it opens with the quote."""
    spans = snippets.sentence_spans(answer)
    if not spans:
        return answer
    first = answer[spans[0][0] : spans[0][1]].strip()
    return answer if '"' in first or "\u201c" in first else first


def _text_between(table, document: _Document, chunk_id, start, end) -> str | None:
    """The document's text [start:end], read from the cited passage (which holds it)."""
    if not isinstance(start, int) or not isinstance(end, int) or end <= start:
        return None
    row = (
        owned_list(Chunk, tenant=table.tenant)
        .filter(pk=chunk_id, document_id=document.pk, char_start__lte=start, char_end__gte=end)
        .values_list("char_start", "text")
        .first()
    )
    if row is None:
        return None
    chunk_start, text = row
    return text[start - chunk_start : end - chunk_start]


_EMPTY = {"answer": "", "quote": "", "chunk_id": None, "char_start": None, "char_end": None, "page": None,
          "confidence": None, "needs_review": False, "error": ""}  # fmt: skip


def _save(table: ReviewTable, document: _Document, column: TableColumn, cell: dict) -> None:
    values = {**_EMPTY, **cell, "column_key": column.key, "document_indexed_at": document.indexed_at}
    try:
        with transaction.atomic():
            # A lawyer's review judged the document as it was: computed for changed text, it goes.
            ReviewCell.objects.filter(
                tenant=table.tenant, table=table, document_id=document.pk, column_index=column.index
            ).exclude(document_indexed_at=document.indexed_at).update(**UNREVIEWED)
            ReviewCell.objects.update_or_create(
                tenant=table.tenant,
                table=table,
                document_id=document.pk,
                column_index=column.index,
                defaults=values,
            )
    except IntegrityError:  # the document (or the table) was deleted meanwhile
        logger.info("review cell skipped", extra={"table_id": table.pk, "document_id": document.pk})
