"""The result row every retrieval leg returns: which chunk, of which document, how good."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk, best first in any list of hits.

    `score` is the leg's own score: cosine similarity (semantic), a 0..1 keyword score (keyword) or
    the reciprocal-rank-fusion score (hybrid). `similarity` and `keyword_score` keep the per-leg
    scores after fusion, because ranking later needs the semantic similarity of every hit; either
    is None when that leg was not run (or, for `similarity`, the chunk has no vector of the current
    embedding model).
    """

    chunk_id: int
    document_id: int
    score: float
    similarity: float | None = None
    keyword_score: float | None = None
