"""A request's scope, checked and resolved against its tenant before any stage runs.

- `filters.case_ids` / `filters.document_ids` naming a case or document the tenant does not have is
  a `NotFound` (404), the same whether it is missing or another tenant's: a typo or a stale id is
  told, never answered as "not found in the knowledge base".
- The service-interface spec's `filters.source` (a file name or title) becomes the ids of the
  tenant's documents so named; naming none leaves nothing to search, so the answer is "I don't
  know" (the spec's missing-collection case), never an answer from every document.
"""

from __future__ import annotations

import dataclasses

from rag import selectors
from rag.retrieval.filters import MAX_ID, SearchFilters
from ragsite.exceptions import NotFound
from tenants.models import Tenant

from .config import QueryConfig

# An id no row has: a filter no chunk passes.
_NOTHING = SearchFilters(document_ids=(MAX_ID,))
_KINDS = {"case_ids": "case", "document_ids": "document"}


def scope_resolve(*, tenant: Tenant, config: QueryConfig) -> QueryConfig:
    """`config` with its filters checked against `tenant` and its `source` resolved into
    `filters.document_ids`. Raises `NotFound` for a case or document id the tenant lacks."""
    unknown = selectors.filter_ids_unknown(tenant=tenant, filters=config.filters)
    if unknown:
        raise NotFound(
            "The filters name a case or document that does not exist.",
            details={f"filters.{name}": _unknown_text(name, ids) for name, ids in unknown.items()},
        )
    if config.source is None:
        return config
    named = tuple(selectors.document_ids_named(tenant=tenant, name=config.source))
    filters = config.filters.narrowed(SearchFilters(document_ids=named)) if named else None
    return dataclasses.replace(config, filters=filters or _NOTHING, source=None)


def _unknown_text(name: str, ids: list[int]) -> str:
    return f"No {_KINDS[name]} with id {', '.join(map(str, ids))}."
