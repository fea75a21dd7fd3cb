"""The documents in a review's scope it could not check, and the sentence that says which.

"None of the 25 contracts checked has a change-of-control clause" is only as good as what it
leaves out. A lawyer must know that two more of the matter's documents are still being indexed
and one failed — named, since they may open them and upload or reindex them — and that one more
is confidential and not open to them: counted, never named or read (its title is not repeated in
an answer, and nothing of its text is searched). A case walled off from the reader is outside
what they may know of, so its documents are not even counted (SearchFilters.visibility).

Only a scope the request names (its case or document ids) is counted: a firm-wide question has no
list of documents it was meant to cover.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from rag.models import Document, DocumentStatus
from rag.retrieval.filters import SearchFilters
from tenants.models import Tenant
from tenants.selectors import owned_list

MAX_NAMED = 10  # documents named one by one; past that the rest are counted
_WHY = {
    DocumentStatus.QUEUED: "waiting to be indexed",
    DocumentStatus.PROCESSING: "still being indexed",
    DocumentStatus.FAILED: "could not be indexed",
}


@dataclass(frozen=True)
class Pending:
    """A document in scope the reader may see that has no passages to check yet."""

    document_id: int
    title: str
    status: str  # a DocumentStatus other than ready


@dataclass(frozen=True)
class Unchecked:
    pending: tuple[Pending, ...] = ()  # visible to the reader, not indexed (yet)
    withheld: int = 0  # confidential documents in scope the reader may not read

    def __len__(self) -> int:
        return len(self.pending) + self.withheld

    def sentence(self) -> str:
        """What an answer says of them ("" when the review checked everything in scope).

        No quotation marks: an answer's citation checks pair each quotation mark with the next."""
        parts = []
        if self.pending:
            named = [f"{_plain(p.title)} ({_WHY.get(p.status, p.status)})" for p in self.pending[:MAX_NAMED]]
            if len(self.pending) > MAX_NAMED:
                named.append(f"{len(self.pending) - MAX_NAMED} more not indexed yet")
            listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + f" and {named[-1]}"
            parts.append(f"{len(self.pending)} more in scope could not be checked: {listed}.")
        if self.withheld == 1:
            parts.append("1 more is confidential and not open to you: it was not checked.")
        elif self.withheld:
            parts.append(f"{self.withheld} more are confidential and not open to you: they were not checked.")
        return " ".join(parts)


def in_scope(tenant: Tenant, filters: SearchFilters, checked: set[int]) -> Unchecked:
    """The documents the filters' case or document ids name that the review did not check."""
    if not (filters.case_ids or filters.document_ids):
        return Unchecked()
    scope = Q()
    if filters.case_ids:
        scope &= Q(case_id__in=filters.case_ids)
    if filters.document_ids:
        scope &= Q(pk__in=filters.document_ids)
    documents = owned_list(Document, tenant=tenant).filter(scope).exclude(pk__in=checked)
    visibility = filters.visibility
    visible = documents if visibility is None else documents.filter(visibility.as_document_q())
    pending = tuple(
        Pending(pk, title, status)
        for pk, title, status in visible.exclude(status=DocumentStatus.READY)
        .order_by("title", "pk")
        .values_list("pk", "title", "status")
    )
    withheld = 0
    if visibility is not None and visibility.readable_confidential is not None:
        # What the reader may not see, less the walled cases (not even counted): confidential.
        hidden = documents.exclude(visibility.as_document_q())
        if visibility.walled_case_ids:
            hidden = hidden.exclude(case_id__in=sorted(visibility.walled_case_ids))
        withheld = hidden.count()
    return Unchecked(pending, withheld)


def _plain(title: str) -> str:
    return " ".join(title.replace('"', "").split()) or "Untitled document"
