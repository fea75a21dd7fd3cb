"""Making, running, cancelling and deleting review tables, and the firm's saved column sets.

A table runs as a background job on the query jobs' queue (rag.tasks.run_review_table) for the
caller who starts it: the documents they may read are checked. `review_table_rerun` runs it again
for whoever asks, recomputing only what changed (rag.review.tables.fill).
"""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from rag import selectors as rag_selectors
from rag.queries.caller import Caller
from rag.retrieval.service import reader_visibility
from ragsite.exceptions import Conflict, InvalidInput, QueueUnavailable

from . import selectors
from .fill import visible_documents
from .models import ACTIVE, UNREVIEWED, ReviewCell, ReviewStatus, ReviewTable, ReviewTemplate
from .specs import validated

logger = logging.getLogger(__name__)


def review_table_create(
    *, caller: Caller, case_id, columns=None, template_id=None, name: str = "", enqueue: bool = True
) -> ReviewTable:
    """A new table of the case's documents by `columns` (or a saved template's), queued to run.
    `NotFound` for a missing, foreign or walled-off case or template; `InvalidInput` for bad
    columns; `QueueUnavailable` when the job cannot be queued."""
    case = rag_selectors.case_get(tenant=caller.tenant, case_id=case_id, hidden_cases=caller.hidden_cases)
    if (columns is None) == (template_id is None):
        raise InvalidInput(
            "Give either columns or a template_id.",
            details={"columns": "Give columns or template_id, not both or neither."},
        )
    if template_id is not None:
        template = selectors.review_template_get(tenant=caller.tenant, template_id=template_id)
        columns = template.columns
        name = name or template.name
    table = ReviewTable(
        tenant=caller.tenant,
        case=case,
        name=name,
        columns=validated(columns),
        created_by_id=caller.user_id,
    )
    _start(table, caller)
    table.save()
    if enqueue:
        table_enqueue(table)
    return table


def _start(table: ReviewTable, caller: Caller) -> None:
    """Set a new run up for `caller`, its total known at once (the poller's first answer)."""
    table.run += 1
    table.run_by_id = caller.user_id
    table.run_role = caller.role
    table.run_api_key_prefix = caller.api_key_prefix
    table.status = ReviewStatus.QUEUED
    table.error = None
    table.started_at = table.finished_at = None
    visibility = reader_visibility(tenant=caller.tenant, reader=caller.reader)
    table.total = visible_documents(table, visibility).count() * len(table.columns)
    table.done = 0


def table_enqueue(table: ReviewTable) -> None:
    """Queue the table's current run (`QueueUnavailable`, the table failed, when the broker is down)."""
    from rag.tasks import run_review_table

    try:
        run_review_table.delay(table.pk, table.run)
    except Exception as exc:
        logger.exception("review table could not be queued", extra={"table_id": table.pk})
        error = QueueUnavailable()
        ReviewTable.objects.filter(pk=table.pk, run=table.run).update(
            status=ReviewStatus.FAILED,
            error={"error_type": error.error_type, "message": error.message},
            finished_at=timezone.now(),
        )
        raise error from exc


def review_table_rerun(*, caller: Caller, table: ReviewTable) -> ReviewTable:
    """Run the table again for `caller`: `Conflict` while it is queued or running."""
    with transaction.atomic():
        table = ReviewTable.objects.select_for_update().get(pk=table.pk)
        if table.is_active:
            raise Conflict(
                "The table is still being filled: cancel it first or wait.",
                details={"status": table.status},
            )
        _start(table, caller)
        table.save()
    table_enqueue(table)
    return selectors.review_table_get(tenant=caller.tenant, table_id=table.pk)


def review_table_cancel(*, table: ReviewTable) -> ReviewTable:
    """Stop a queued or running table (the job stops at its next cell; cells made so far stay).
    A table that is not running is returned as it is."""
    ReviewTable.objects.filter(pk=table.pk, status__in=ACTIVE).update(
        status=ReviewStatus.CANCELLED, finished_at=timezone.now(), updated_at=timezone.now()
    )
    table.refresh_from_db()
    return table


def review_table_delete(*, table: ReviewTable) -> None:
    """Delete the table and its cells (a running job stops at its next cell)."""
    table.delete()


MAX_REVIEW_ANSWER = 2000
MAX_REVIEW_NOTE = 4000


def review_cell_review(*, caller: Caller, cell: ReviewCell, answer: str, note: str = "") -> ReviewCell:
    """Record `caller`'s review of `cell`: their answer (it wins over the machine's in the page and
    the exports; the machine's stays for comparison) and a note. `InvalidInput` for an empty or
    overlong answer or an overlong note."""
    answer, note = (answer or "").strip(), (note or "").strip()
    errors = {}
    if not answer or len(answer) > MAX_REVIEW_ANSWER:
        errors["answer"] = f"Give the answer, at most {MAX_REVIEW_ANSWER} characters."
    if len(note) > MAX_REVIEW_NOTE:
        errors["note"] = f"At most {MAX_REVIEW_NOTE} characters."
    if errors:
        raise InvalidInput("The review needs an answer, and both fields have a length limit.", details=errors)
    cell.reviewed_answer, cell.review_note = answer, note
    cell.reviewer = _reviewer(caller)
    cell.reviewed_at = timezone.now()
    cell.save(update_fields=["reviewed_answer", "review_note", "reviewer", "reviewed_at"])
    return cell


def review_cell_unreview(*, cell: ReviewCell) -> ReviewCell:
    """Take the review of `cell` back: the machine's answer shows again."""
    for field, value in UNREVIEWED.items():
        setattr(cell, field, value)
    cell.save(update_fields=list(UNREVIEWED))
    return cell


def _reviewer(caller: Caller) -> str:
    if caller.user_id is not None:
        user = get_user_model().objects.filter(pk=caller.user_id).first()
        return user.get_username() if user else f"user {caller.user_id}"
    return f"API key {caller.api_key_prefix}"


def review_template_create(*, caller: Caller, name: str, columns) -> ReviewTemplate:
    """A firm's saved column set; `Conflict` when the name is taken, `InvalidInput` for bad columns."""
    template = ReviewTemplate(
        tenant=caller.tenant, name=name.strip(), columns=validated(columns), created_by_id=caller.user_id
    )
    try:
        with transaction.atomic():
            template.save()
    except IntegrityError as exc:
        raise Conflict(
            "The firm already has a review template of this name.", details={"name": "Taken."}
        ) from exc
    return template


def review_template_delete(*, template: ReviewTemplate) -> None:
    template.delete()
