"""A review table as a file: CSV or XLSX (openpyxl), as the reader may see it (the same rows as
`selectors.review_table_view`). One row per document; for each column its answer (a reviewer's,
where a lawyer reviewed the cell), the quote, the page, the confidence, whether it needs review
and who reviewed it. Text a spreadsheet would run as a formula is
prefixed with "'" (rag.exports.spreadsheet)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font

from rag.exports.spreadsheet import csv_safe

from .selectors import TableView

CSV_TYPE = "text/csv; charset=utf-8"
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
FORMATS = ("csv", "xlsx")
PARTS = ("answer", "quote", "page", "confidence", "needs review", "reviewed")


@dataclass(frozen=True)
class ExportFile:
    content: bytes
    content_type: str
    filename: str


def header(view: TableView) -> list[str]:
    labels = [
        column.label if part == "answer" else f"{column.label}: {part}"
        for column in view.columns
        for part in PARTS
    ]
    return ["Document", "Document id", *(csv_safe(label) for label in labels)]


def rows(view: TableView) -> list[list]:
    lines = []
    for row in view.rows:
        line = [row.title, row.document_id]
        for cell in row.cells:
            if cell is None:
                line += ["", "", "", "", "yes", ""]
                continue
            confidence = "" if cell.confidence is None else round(cell.confidence, 3)
            answer = cell.final_answer or cell.error
            needs_review = "yes" if cell.needs_review and not cell.reviewed else "no"
            line += [answer, cell.quote, cell.page or "", confidence, needs_review, reviewed(cell)]
        lines.append([csv_safe(value) for value in line])
    return lines


def reviewed(cell) -> str:
    """Who reviewed the cell and when, what the machine had answered, and their note ("" when
    nobody did): the answer column shows the reviewer's answer."""
    if not cell.reviewed:
        return ""
    machine = cell.answer or cell.error
    said = f"by {cell.reviewer} on {cell.reviewed_at:%Y-%m-%d}; the review table said: {machine}"
    return f"{said}; note: {cell.review_note}" if cell.review_note else said


def table_export(view: TableView, fmt: str) -> ExportFile:
    stem = f"review-table-{view.table.pk}"
    if fmt == "xlsx":
        return ExportFile(_xlsx(view), XLSX_TYPE, f"{stem}.xlsx")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header(view))
    writer.writerows(rows(view))
    return ExportFile(buffer.getvalue().encode("utf-8"), CSV_TYPE, f"{stem}.csv")


def _xlsx(view: TableView) -> bytes:
    book = Workbook()
    sheet = book.active
    sheet.title = "Review table"
    sheet.append(header(view))
    for line in rows(view):
        sheet.append(line)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    wrap = Alignment(wrap_text=True, vertical="top")
    for line in sheet.iter_rows(min_row=2):
        for cell in line:
            cell.alignment = wrap
    sheet.freeze_panes = "C2"
    sheet.column_dimensions["A"].width = 40
    questions = book.create_sheet("Columns")
    questions.append(["Column", "Key", "Kind", "Question"])
    for column in view.columns:
        questions.append(
            [csv_safe(value) for value in (column.label, column.key, column.kind, column.question)]
        )
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()
