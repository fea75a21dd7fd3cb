"""Reading review tables. A table is found through its case (a walled case's tables are the same
`NotFound` as a missing id, as is another tenant's), and its cells are re-checked against the
reader on every read: only documents of the case the reader may read now are shown, whatever the
reader who ran the table could read (docs/reliability.md, "Who sees what")."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from django.db.models import QuerySet

from rag.models import Document
from rag.queries.caller import Caller
from rag.retrieval.service import reader_visibility
from ragsite.exceptions import NotFound
from tenants.models import Tenant
from tenants.selectors import owned_get, owned_list

from .models import ReviewCell, ReviewTable, ReviewTemplate
from .specs import TableColumn, table_columns

TABLE_NOT_FOUND = "Review table not found."
CELL_NOT_FOUND = "Review cell not found."


def review_table_list(*, tenant: Tenant, case_id: int) -> QuerySet[ReviewTable]:
    return owned_list(ReviewTable, tenant=tenant).filter(case_id=case_id).select_related("created_by")


def review_table_get(*, tenant: Tenant, table_id, hidden_cases: Collection[int] = ()) -> ReviewTable:
    """One table; `NotFound` when missing, another tenant's, or its case is walled off."""
    try:
        table = owned_list(ReviewTable, tenant=tenant).select_related("case", "created_by").get(pk=table_id)
    except (ReviewTable.DoesNotExist, ValueError, TypeError, OverflowError) as exc:
        raise NotFound(TABLE_NOT_FOUND) from exc
    if table.case_id in set(hidden_cases):
        raise NotFound(TABLE_NOT_FOUND)
    return table


@dataclass
class Row:
    document_id: int
    title: str
    status: str
    cells: list[ReviewCell | None] = field(default_factory=list)  # one per column, None if not yet


@dataclass
class TableView:
    """What one reader sees of a table: its columns, and a row per document they may read now."""

    table: ReviewTable
    columns: list[TableColumn]
    rows: list[Row]
    redactions_applied: bool  # cells of documents the reader may not read were left out


def review_table_view(*, caller: Caller, table: ReviewTable) -> TableView:
    tenant = caller.tenant
    visibility = reader_visibility(tenant=tenant, reader=caller.reader)
    columns = table_columns(table.columns)
    cells = owned_list(ReviewCell, tenant=tenant).filter(table=table)
    in_case = owned_list(Document, tenant=tenant).filter(
        case_id=table.case_id, pk__in=cells.values("document_id")
    )
    shown_ids = set(in_case.filter(visibility.as_document_q()).values_list("pk", flat=True))
    # The case is visible (else NotFound), so what it holds but is not shown is confidential text
    # the reader may not read: said, like a query's redactions_applied, never named.
    redacted = in_case.exclude(pk__in=shown_ids).exists()
    documents = (
        owned_list(Document, tenant=tenant)
        .filter(pk__in=shown_ids)
        .order_by("title", "pk")
        .values_list("pk", "title", "status")
    )
    rows = {pk: Row(pk, title, status, [None] * len(columns)) for pk, title, status in documents}
    for cell in cells.filter(column_index__lt=len(columns), document_id__in=shown_ids):
        rows[cell.document_id].cells[cell.column_index] = cell
    return TableView(table, columns, list(rows.values()), redacted)


def review_cell_get(*, caller: Caller, cell_id) -> ReviewCell:
    """One cell; `NotFound` (one message for all) when missing, another tenant's, of a walled-off
    case's table, or of a document the caller may not read now: a hidden document is never
    confirmed."""
    try:
        cell = owned_list(ReviewCell, tenant=caller.tenant).filter(pk=cell_id).first()
    except (ValueError, TypeError, OverflowError) as exc:
        raise NotFound(CELL_NOT_FOUND) from exc
    if cell is None:
        raise NotFound(CELL_NOT_FOUND)
    try:
        table = review_table_get(
            tenant=caller.tenant, table_id=cell.table_id, hidden_cases=caller.hidden_cases
        )
    except NotFound as exc:
        raise NotFound(CELL_NOT_FOUND) from exc
    visibility = reader_visibility(tenant=caller.tenant, reader=caller.reader)
    readable = owned_list(Document, tenant=caller.tenant).filter(
        visibility.as_document_q(), pk=cell.document_id, case_id=table.case_id
    )
    if not readable.exists():
        raise NotFound(CELL_NOT_FOUND)
    return cell


def review_template_list(*, tenant: Tenant) -> QuerySet[ReviewTemplate]:
    return owned_list(ReviewTemplate, tenant=tenant).select_related("created_by")


def review_template_get(*, tenant: Tenant, template_id) -> ReviewTemplate:
    try:
        return owned_get(ReviewTemplate, tenant=tenant, pk=template_id)
    except OverflowError as exc:
        raise NotFound("Review template not found.") from exc
