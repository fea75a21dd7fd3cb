"""Hybrid search: semantic and keyword legs fused by weighted reciprocal rank fusion (RRF).

RRF uses ranks, not scores, so a cosine similarity and a keyword score never need a common scale:
score(chunk) = Σ_legs weight / (rrf_k + rank in that leg), rank counted from 1.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.ingest import embedding
from ragsite.exceptions import InvalidQuery
from tenants.models import Tenant

from .filters import SearchFilters
from .hits import Hit
from .keyword import keyword_search
from .session import positive_int
from .vector import semantic_search

MODES = ("semantic", "keyword", "hybrid")
DEFAULT_RRF_K = 60  # the constant of Cormack et al. (2009); damps the gap between top ranks
MIN_CANDIDATES = 10  # rows per leg when the caller names none (the pipeline passes RAG_CANDIDATE_POOL)


def weighted_rrf(
    rankings: Sequence[Sequence[int]], weights: Sequence[float], *, rrf_k: int = DEFAULT_RRF_K
) -> list[tuple[int, float]]:
    """Fuse ranked id lists into [(id, score)], best first.

    Each list is best first; an id absent from a list gets nothing from it. Ties go to the id
    with the better best rank, then the smaller id (deterministic).
    """
    if len(rankings) != len(weights):
        raise ValueError("one weight per ranking")
    scores: dict[int, float] = {}
    best_rank: dict[int, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(dict.fromkeys(ranking), start=1):
            scores[item] = scores.get(item, 0.0) + weight / (rrf_k + rank)
            best_rank[item] = min(best_rank.get(item, rank), rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], best_rank[pair[0]], pair[0]))


def _validated(mode: str, weights, rrf_k) -> tuple[float, float]:
    if mode not in MODES:
        raise InvalidQuery(f"Unknown search mode {mode!r}.", details={"mode": f"One of {', '.join(MODES)}."})
    try:
        semantic_weight, keyword_weight = (float(w) for w in weights)
    except (TypeError, ValueError) as exc:
        raise InvalidQuery("weights must be two numbers.", details={"weights": "Two numbers."}) from exc
    if min(semantic_weight, keyword_weight) < 0 or semantic_weight + keyword_weight <= 0:
        raise InvalidQuery(
            "weights must be non-negative and not both zero.",
            details={"weights": "Non-negative, not both 0."},
        )
    if isinstance(rrf_k, bool) or not isinstance(rrf_k, int) or rrf_k < 0:
        raise InvalidQuery(
            "rrf_k must be a non-negative integer.", details={"rrf_k": "Non-negative integer."}
        )
    return semantic_weight, keyword_weight


def hybrid_search(
    *,
    tenant: Tenant,
    query: str,
    k: int,
    filters: SearchFilters | None = None,
    mode: str = "hybrid",
    candidates: int | None = None,
    weights: tuple[float, float] = (1.0, 1.0),
    rrf_k: int = DEFAULT_RRF_K,
    query_vector=None,
) -> list[Hit]:
    """The `k` best chunks of `tenant` for `query`, best first.

    mode "semantic" or "keyword" runs one leg (score = that leg's score). "hybrid" (the default)
    runs both on `candidates` rows each (default max(MIN_CANDIDATES, 4k)) and fuses them
    with weighted RRF; the hit's `score` is the RRF score, `similarity` its cosine similarity (also
    for keyword-only hits) and `keyword_score` its keyword score or None. A blank query gives [].
    `query_vector` is the query's embedding when the caller already has it (else it is embedded).
    """
    semantic_weight, keyword_weight = _validated(mode, weights, rrf_k)
    k = positive_int(k, "k")
    pool = positive_int(candidates, "candidates") if candidates is not None else None
    pool = max(pool or max(MIN_CANDIDATES, 4 * k), k)
    if not (query or "").strip():
        return []
    if mode == "keyword":
        return keyword_search(tenant=tenant, query=query, k=k, filters=filters)
    if query_vector is None:
        query_vector = embedding.embed([query])[0]
    if mode == "semantic":
        return semantic_search(tenant=tenant, query_vector=query_vector, k=k, filters=filters)

    # A leg weighted 0 cannot change the fused order: it is not run.
    semantic = (
        semantic_search(tenant=tenant, query_vector=query_vector, k=pool, filters=filters)
        if semantic_weight
        else []
    )
    keyword = (
        keyword_search(tenant=tenant, query=query, k=pool, filters=filters, query_vector=query_vector)
        if keyword_weight
        else []
    )
    by_id = {hit.chunk_id: hit for hit in keyword}
    by_id.update({hit.chunk_id: hit for hit in semantic})
    fused = weighted_rrf(
        [[hit.chunk_id for hit in semantic], [hit.chunk_id for hit in keyword]],
        [semantic_weight, keyword_weight],
        rrf_k=rrf_k,
    )[:k]
    # Keyword hits carry their similarity too (computed in the keyword query).
    similarity = {hit.chunk_id: hit.similarity for hit in keyword}
    similarity.update({hit.chunk_id: hit.score for hit in semantic})
    keyword_score = {hit.chunk_id: hit.score for hit in keyword} if keyword_weight else {}
    return [
        Hit(
            chunk_id=chunk_id,
            document_id=by_id[chunk_id].document_id,
            score=score,
            similarity=similarity.get(chunk_id),
            keyword_score=keyword_score.get(chunk_id),
        )
        for chunk_id, score in fused
    ]
