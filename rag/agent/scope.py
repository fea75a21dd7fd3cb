"""The request's scope as the agent sees it: its filters (case, documents, dates, jurisdiction,
types, source, years, metadata) bound every tool call and every probe of the planners.

A tool call's own filters are intersected with the scope, so a call can narrow it but never widen
it; a call contradicting it searches nothing. The documents and cases the agent may know of (for
metadata, parties, buckets and clarifications) are those the scope's search can reach: anything
outside is "not found" to the agent, as another tenant's document is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from django.db.models import QuerySet

from rag import selectors
from rag.models import Case, Document
from rag.retrieval.filters import SearchFilters
from tenants.models import Tenant
from tenants.selectors import owned_list


@dataclass(frozen=True)
class AgentScope:
    """One tenant's documents under the request's `filters` (empty filters: all of them)."""

    tenant: Tenant
    filters: SearchFilters = field(default_factory=SearchFilters)

    @classmethod
    def of(cls, tenant: Tenant, filters: SearchFilters | None) -> AgentScope:
        """The scope of a request's filters (None: the whole tenant)."""
        return cls(tenant, filters or SearchFilters())

    def narrow(self, filters: SearchFilters) -> SearchFilters | None:
        """A tool call's `filters` within the scope, without the documents it names outside the
        scope; None when they contradict it (when none of the documents it names is in scope)."""
        narrowed = self.filters.narrowed(filters)
        if narrowed is None or not narrowed.document_ids or self.filters.is_empty():
            return narrowed
        inside = set(self.documents().filter(pk__in=narrowed.document_ids).values_list("pk", flat=True))
        kept = tuple(pk for pk in narrowed.document_ids if pk in inside)
        return replace(narrowed, document_ids=kept) if kept else None

    def documents(self) -> QuerySet[Document]:
        """The tenant's documents inside the scope."""
        documents = owned_list(Document, tenant=self.tenant)
        if self.filters.is_empty():
            return documents
        within = selectors.document_ids_within(tenant=self.tenant, filters=self.filters)
        return documents.filter(pk__in=within)

    def known_cases(self) -> QuerySet[Case]:
        """Every case of the tenant the reader may know of (all but those walled off from them),
        inside the scope or not: a call naming one outside it is told so, not searched."""
        visibility = self.filters.visibility
        hidden = visibility.walled_case_ids if visibility is not None else ()
        return selectors.case_list(tenant=self.tenant, hidden_cases=hidden)

    def cases(self) -> QuerySet[Case]:
        """The tenant's cases holding a document inside the scope (every case when it is empty)."""
        cases = selectors.case_list(tenant=self.tenant)
        if self.filters.is_empty():
            return cases
        return cases.filter(pk__in=self.documents().values("case_id"))
