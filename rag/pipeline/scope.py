"""A request's scope, checked and resolved against its tenant before any stage runs.

- `filters.case_ids` / `filters.document_ids` naming a case or document the tenant does not have is
  a `NotFound` (404), the same whether it is missing or another tenant's: a typo or a stale id is
  told, never answered as "not found in the knowledge base".
- What the reader may see bounds the filters inside the search SQL (`SearchFilters.visibility`):
  the confidential documents they may not read and the cases walled off from them are never
  searched, so nothing about them (text, heading, score, whether a word matched) can come back.
  A walled case, or a document in one, named in the filters is the same 404 as a missing one.
- The service-interface spec's `filters.source` (a file name or title) becomes the ids of the
  tenant's documents so named; naming none leaves nothing to search, so the answer is "I don't
  know" (the spec's missing-collection case), never an answer from every document.
"""

from __future__ import annotations

import dataclasses

from rag import selectors
from rag.retrieval.filters import MAX_ID, SearchFilters
from rag.retrieval.service import Reader, reader_visibility
from ragsite.exceptions import NotFound
from tenants.models import Tenant

from .config import QueryConfig

# An id no row has: a filter no chunk passes.
_NOTHING = SearchFilters(document_ids=(MAX_ID,))
_KINDS = {"case_ids": "case", "document_ids": "document"}


def scope_resolve(*, tenant: Tenant, config: QueryConfig, reader: Reader | None = None) -> QueryConfig:
    """`config` with its filters checked against `tenant`, bounded by what `reader` may see (default:
    a reader of no confidential document) and its `source` resolved into `filters.document_ids`.
    Raises `NotFound` for a case or document id the tenant lacks or walls off from the reader."""
    visibility = reader_visibility(tenant=tenant, reader=reader or Reader())
    unknown = selectors.filter_ids_unknown(tenant=tenant, filters=config.filters, visibility=visibility)
    if unknown:
        raise NotFound(
            "The filters name a case or document that does not exist.",
            details={f"filters.{name}": _unknown_text(name, ids) for name, ids in unknown.items()},
        )
    filters = config.filters.seen_by(visibility)
    if config.source is not None:
        named = tuple(selectors.document_ids_named(tenant=tenant, name=config.source, visibility=visibility))
        filters = (
            filters.narrowed(SearchFilters(document_ids=named)) if named else None
        ) or _NOTHING.seen_by(visibility)
    # What the scope holds that the reader may not read (redactions_applied), whatever is asked.
    withheld = selectors.withheld_within(tenant=tenant, filters=filters)
    filters = dataclasses.replace(filters, visibility=dataclasses.replace(visibility, withheld=withheld))
    return dataclasses.replace(config, filters=filters, source=None)


def _unknown_text(name: str, ids: list[int]) -> str:
    return f"No {_KINDS[name]} with id {', '.join(map(str, ids))}."
