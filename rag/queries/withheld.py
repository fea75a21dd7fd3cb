"""Stored answers re-checked when they are read: access is decided now, not when the answer was given.

An answer is kept with the text it quoted. When the reader may no longer read a document it drew on
(a confidential document whose grant was removed) its text is withheld: the turn stays (the reader
asked it) with a notice in place of the answer, its citations, follow-ups and reasoning. When a
document it drew on now sits behind an ethical wall the reader is not on, the answer does not exist
for them: the same 404 as a missing one.
"""

from __future__ import annotations

from collections.abc import Iterable

from rag.models import Document, Sensitivity
from rag.retrieval.filters import Visibility
from rag.retrieval.service import reader_visibility
from ragsite.exceptions import NotFound
from tenants.selectors import owned_list

from .caller import Caller

WITHHELD_NOTICE = (
    "This answer drew on a confidential document you can no longer read, so its text is withheld."
)
WALLED, CONFIDENTIAL = "walled", "confidential"


def documents_of(result: dict | None, *extra: Iterable[int]) -> set[int]:
    """Ids of the documents a stored result names: retrieved, used, cited (and `extra` ids)."""
    ids: set[int] = set()
    for more in extra:
        ids.update(pk for pk in more or () if isinstance(pk, int))
    if not isinstance(result, dict):
        return ids
    provenance = result.get("provenance") or {}
    for key in ("documents_retrieved", "documents_used"):
        ids.update(pk for pk in provenance.get(key) or () if isinstance(pk, int))
    clarification = result.get("clarification") or {}
    for item in [*(result.get("citations") or ()), *(clarification.get("candidates") or ())]:
        if isinstance(item, dict) and isinstance(item.get("document_id"), int):
            ids.add(item["document_id"])
    return ids


def hidden_kinds(caller: Caller, documents: dict[object, set[int]]) -> dict[object, str]:
    """{key: WALLED or CONFIDENTIAL} for each key of `documents` (key → document ids it drew on)
    that the caller may not see now; keys they may see are left out."""
    wanted = set().union(*documents.values()) if documents else set()
    if not wanted:
        return {}
    visibility = reader_visibility(tenant=caller.tenant, reader=caller.reader)
    rows = (
        owned_list(Document, tenant=caller.tenant)
        .filter(pk__in=wanted)
        .values_list("pk", "case_id", "sensitivity")
    )
    walled, unreadable = set(), set()
    for pk, case_id, sensitivity in rows:
        if case_id in visibility.walled_case_ids:
            walled.add(pk)
        elif sensitivity == Sensitivity.CONFIDENTIAL and not _readable(visibility, pk):
            unreadable.add(pk)
    kinds = {}
    for key, ids in documents.items():
        if ids & walled:
            kinds[key] = WALLED
        elif ids & unreadable:
            kinds[key] = CONFIDENTIAL
    return kinds


def _readable(visibility: Visibility, document_id: int) -> bool:
    readable = visibility.readable_confidential
    return readable is None or document_id in readable


def withheld_result(result: dict) -> dict:
    """`result` with the text it drew from documents the reader may no longer read taken out."""
    kept = {key: value for key, value in result.items() if key not in ("reasoning", "agent", "clarification")}
    kept.update(
        answer=WITHHELD_NOTICE,
        message=WITHHELD_NOTICE,
        citations=[],
        follow_up_questions=[],
        withheld=True,
    )
    provenance = dict(result.get("provenance") or {})
    provenance.update(documents_retrieved=[], documents_used=[])
    kept["provenance"] = provenance
    return kept


def checked_rows(caller: Caller, rows: list, *, result_field: str = "result") -> list:
    """`rows` (stored answers or jobs, each with a result) as `caller` may read them now: a row
    drawing on a walled-off document is left out, one drawing on a confidential document they may
    no longer read has its result withheld (the row's `result` replaced in memory only)."""
    documents = {
        row.pk: documents_of(getattr(row, result_field), getattr(row, "documents_used", ()) or ())
        for row in rows
    }
    kinds = hidden_kinds(caller, documents)
    shown = []
    for row in rows:
        kind = kinds.get(row.pk)
        if kind == WALLED:
            continue
        result = getattr(row, result_field)
        if kind == CONFIDENTIAL and isinstance(result, dict):
            setattr(row, result_field, withheld_result(result))
        shown.append(row)
    return shown


def checked_row(caller: Caller, row, *, result_field: str = "result", missing: str = "Query not found."):
    """One row as `checked_rows` shows it; `NotFound` (as for a missing row) when it is walled off."""
    shown = checked_rows(caller, [row], result_field=result_field)
    if not shown:
        raise NotFound(missing)
    return shown[0]
