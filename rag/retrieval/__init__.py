"""Pure retrieval over a tenant's chunks: semantic (pgvector HNSW), keyword (full-text) and their
weighted reciprocal rank fusion. Every search is scoped to one tenant inside its SQL."""

from .filters import SearchFilters
from .hits import Hit
from .hybrid import MODES, hybrid_search, weighted_rrf
from .keyword import keyword_search
from .vector import nearest_chunks, semantic_search

__all__ = [
    "MODES",
    "Hit",
    "SearchFilters",
    "hybrid_search",
    "keyword_search",
    "nearest_chunks",
    "semantic_search",
    "weighted_rrf",
]
