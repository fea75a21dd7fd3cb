"""Reranking: rescore a high-recall candidate set with a model that reads query and passage together.

`get_reranker()` returns a sentence-transformers `CrossEncoder` loaded from the local directory
named by `RAG_RERANKER_MODEL` (never from a model hub), or None. None is the offline default: the
candidates keep their fused hybrid relevance (cosine similarity and keyword coverage, plus the
routing match). We measured a key-free alternative — scoring each passage by its best sentence's
embedding similarity — on LegalBench-RAG (README, "Retrieval quality"): it did not raise
precision@1 and cost seconds per query on CPU, so it is not the default.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from django.conf import settings

from ragsite.exceptions import ConfigurationError
from ragsite.heap import freeze_long_lived

logger = logging.getLogger(__name__)


class Reranker(Protocol):
    """Scores (query, passage) pairs: higher is more relevant, in 0..1."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder from a local directory. Scores are in 0..1: the
    model's own activation for one output (a sigmoid by default), the last ("relevant") class's
    softmax probability for several."""

    def __init__(self, model_path: str | Path, *, batch_size: int = 32, max_length: int = 512):
        path = Path(model_path)
        if not path.is_dir():
            raise ConfigurationError(
                f"RAG_RERANKER_MODEL must be a local model directory; {str(path)!r} is not one."
            )
        from sentence_transformers import CrossEncoder

        self.name = path.name
        self.batch_size = batch_size
        self._model = CrossEncoder(str(path), max_length=max_length, local_files_only=True, device="cpu")

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        scores = self._model.predict(
            [(query, passage) for passage in passages],
            batch_size=self.batch_size,
            show_progress_bar=False,
            apply_softmax=True,
        )
        if getattr(scores, "ndim", 1) == 2:
            scores = scores[:, -1]
        return [min(max(float(value), 0.0), 1.0) for value in scores]


_lock = threading.Lock()
_loaded: dict[str, CrossEncoderReranker] = {}


def get_reranker() -> Reranker | None:
    """The configured reranker (loaded once per process), or None when `RAG_RERANKER_MODEL` is
    empty or `ENABLE_RERANKING` is off. A named model that cannot be loaded is a configuration
    error, not a silent fallback."""
    name = settings.RAG_RERANKER_MODEL
    if not settings.ENABLE_RERANKING or not name:
        return None
    with _lock:
        if name not in _loaded:
            _loaded[name] = CrossEncoderReranker(name)
            freeze_long_lived()
        return _loaded[name]
