"""Semantic search: pgvector HNSW cosine nearest neighbours, scoped and filtered inside the SQL."""

from __future__ import annotations

import numpy as np
from django.db.models import QuerySet
from pgvector.django import CosineDistance

from rag.ingest import embedding
from rag.models import EMBEDDING_DIMENSION, Chunk
from ragsite.db_routers import read_connection
from tenants.models import Tenant
from tenants.selectors import owned_list

from .filters import SearchFilters
from .hits import Hit
from .session import MAX_EF_SEARCH, default_ef_search, holds_at_most, positive_int, search_session

__all__ = ["Hit", "nearest_chunks", "semantic_search"]

# A filter passing at most this many chunks is searched exactly (every passing chunk compared):
# a few milliseconds, where the HNSW iterative scan takes longer and misses some of the nearest.
EXACT_SEARCH_ROWS = 5000
# In a large table a scope of up to this share of its rows, EXACT_SEARCH_MAX_ROWS at most, is
# searched exactly too: at 1.1M rows a 10,000-chunk scope (a firm among others, a 1 % filter of a
# large firm) took the iterative scan 115 ms at p95 for recall 0.83, and an exact search 45 ms for
# 1.0; an exact search costs about 4.5 ms per 1,000 chunks here, so past ~15,000 the index is
# cheaper again (bench/README.md, "a million passages").
EXACT_SEARCH_SHARE = 0.015
EXACT_SEARCH_MAX_ROWS = 15_000
# VECTOR_STORE_EF_SEARCH is for a graph of up to this many rows; a larger one gets twice the
# setting. At 1.1M rows recall@10 was 0.90-0.93 at ef_search 200 and 0.98 at 400 (0.99 at 200 for
# 100k rows), and hybrid search's p95 stayed under 50 ms (bench/README.md, "a million passages").
LARGE_GRAPH_ROWS = 500_000


def query_vector_list(query_vector) -> list[float]:
    """`query_vector` as a list of floats, or ValueError when it is not one embedding."""
    vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    if vector.shape != (EMBEDDING_DIMENSION,) or not np.all(np.isfinite(vector)):
        raise ValueError(
            f"query_vector must be {EMBEDDING_DIMENSION} finite floats, got shape {vector.shape}"
        )
    return vector.tolist()


def _searchable(tenant: Tenant, filters: SearchFilters | None, embedding_model: str | None) -> QuerySet:
    """The tenant's chunks with a vector of `embedding_model` (default: the current one) that
    pass `filters`."""
    chunks = owned_list(Chunk, tenant=tenant).filter(embedding_model=embedding_model or embedding.model_id())
    return chunks if filters is None else chunks.filter(filters.as_q())


def nearest_chunks(
    *,
    tenant: Tenant,
    query_vector,
    k: int,
    filters: SearchFilters | None = None,
    embedding_model: str | None = None,
) -> QuerySet:
    """The semantic search SQL as a queryset of (id, document_id, distance) rows (for EXPLAIN).

    The tenant, the embedding model and the filters are WHERE conditions of the HNSW-ordered scan,
    so they apply before the LIMIT, never to an already-cut top k.
    """
    return (
        _searchable(tenant, filters, embedding_model)
        .annotate(distance=CosineDistance("embedding", query_vector_list(query_vector)))
        .order_by("distance")
        .values_list("pk", "document_id", "distance")[:k]
    )


def semantic_search(
    *,
    tenant: Tenant,
    query_vector,
    k: int,
    filters: SearchFilters | None = None,
    ef_search: int | None = None,
    embedding_model: str | None = None,
) -> list[Hit]:
    """The `k` chunks of `tenant` nearest to `query_vector` (cosine), best first.

    Only chunks embedded with `embedding_model` (default: the current model) are compared: vectors
    of different models live in different spaces. `ef_search` (default
    max(VECTOR_STORE_EF_SEARCH, k), twice the setting in a table of more than LARGE_GRAPH_ROWS)
    trades speed for recall; pgvector's iterative scan still
    returns `k` rows when a filter rejects most of the index's nearest candidates, and a filter
    that leaves at most EXACT_SEARCH_ROWS chunks is searched exactly, without the index.
    Score = cosine similarity (1 - cosine distance).
    Raises `VectorStoreUnavailable` on timeouts (settings.VECTOR_STORE_TIMEOUT_SECONDS) and lost
    connections.
    """
    k = positive_int(k, "k")
    ef = positive_int(ef_search, "ef_search", maximum=MAX_EF_SEARCH) if ef_search is not None else None
    rows_in_table = table_rows()
    ef = ef or min(max(ef_search_for(rows_in_table), k), MAX_EF_SEARCH)
    query = nearest_chunks(
        tenant=tenant, query_vector=query_vector, k=k, filters=filters, embedding_model=embedding_model
    )
    with search_session(ef_search=ef):
        if _is_selective(tenant, filters, embedding_model, limit=exact_search_limit(rows_in_table)):
            # Few rows pass the tenant and filters: comparing with each of them is exact and faster
            # than an HNSW scan that must walk past the 99 % the WHERE clause rejects.
            with read_connection().cursor() as cursor:
                cursor.execute("SELECT set_config('enable_indexscan', 'off', true)")
        rows = list(query)
    # relaxed_order may return rows slightly out of order: restore exact order by distance.
    rows.sort(key=lambda row: (row[2], row[0]))
    return [
        Hit(chunk_id=pk, document_id=document_id, score=1.0 - distance, similarity=1.0 - distance)
        for pk, document_id, distance in rows
    ]


def _is_selective(
    tenant: Tenant, filters: SearchFilters | None, embedding_model: str | None, *, limit: int
) -> bool:
    """Whether at most `limit` (exact_search_limit) of the tenant's chunks pass `filters` (counted
    up to one more). Without filters too: a small tenant in an index shared with large ones (or
    full of dead entries from re-ingestion) is a selective filter of its own, which an HNSW scan
    can walk past until its memory limit and return nothing."""
    return holds_at_most(_searchable(tenant, filters, embedding_model), limit)


def table_rows() -> float:
    """The chunk table's rows, every tenant's, as PostgreSQL last estimated them (0 before the
    first ANALYZE): the size of the HNSW graph a search walks."""
    with read_connection().cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [Chunk._meta.db_table])
        row = cursor.fetchone()
    return max(float(row[0]), 0.0) if row else 0.0  # -1 before the first ANALYZE


def exact_search_limit(rows_in_table: float | None = None) -> int:
    """How many chunks a scope may hold and still be searched exactly: EXACT_SEARCH_ROWS, or
    EXACT_SEARCH_SHARE of the table's rows (table_rows() unless given) up to EXACT_SEARCH_MAX_ROWS."""
    rows_in_table = table_rows() if rows_in_table is None else rows_in_table
    return max(EXACT_SEARCH_ROWS, min(EXACT_SEARCH_MAX_ROWS, int(rows_in_table * EXACT_SEARCH_SHARE)))


def ef_search_for(rows_in_table: float) -> int:
    """The HNSW candidate list a search of a table of `rows_in_table` rows gets unless it names
    one: VECTOR_STORE_EF_SEARCH, twice that past LARGE_GRAPH_ROWS (at most MAX_EF_SEARCH)."""
    ef = default_ef_search()
    return min(2 * ef if rows_in_table > LARGE_GRAPH_ROWS else ef, MAX_EF_SEARCH)
