"""A learned prompt-injection detector for questions: a linear probe over the search's own embedding.

The named patterns and the typed-injection score (`rag.pipeline.sanitize`,
`rag.pipeline.typed_injection`) are rules: each was written from an attack seen, and rules written
from one sample of attacks carry poorly to the next (issue #33: 95 % of the public dev split's
direct prompts, ~84 % of a held-out sample of the same corpora). This model reads what a text is
*about* instead of its wording: `w · embedding + b` over the MiniLM vector the product already
computes for search (`rag.ingest.embedding`), trained on the hostile dev split against ordinary
legal questions and contract passages (`rag.security.injection_train`, `manage.py hostile_train`).

A text longer than the model's window is scored in overlapping windows of `WINDOW` characters and
its score is the highest window's, so an attack hidden at the end of a long text still counts. A
text is flagged when its score reaches the stored threshold, which was set above every ordinary
question and contract passage scored out of sample during training. Only question scope uses it
(`injection_findings`' `learned_injection` finding, after the rules found nothing).

The model lives in `data/injection_model.json` with the embedding model it was trained on; with
another `EMBEDDING_MODEL`, or without the file, nothing is flagged by it (the rules still run).
The product reads the JSON with numpy only; scikit-learn is needed only to train.
"""

from __future__ import annotations

import json
import logging
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

MODEL_FILE = Path(__file__).resolve().parent / "data" / "injection_model.json"
FORMAT_VERSION = 1
# Characters per scored window, and the step between windows: 500 characters are ~120 word pieces,
# well inside MiniLM's 256, and RAG_MAX_QUERY_LENGTH is 500, so a question is one window.
WINDOW = 500
STRIDE = 250
# At most this many windows are scored (spread evenly, the first and the last among them): a
# question is one, a 7,000-character jailbreak 27; longer texts never reach the scan as questions.
MAX_WINDOWS = 32


@dataclass(frozen=True)
class InjectionModel:
    """A linear probe `w · embedding + b` and the score at which a text is flagged."""

    weights: np.ndarray
    bias: float
    threshold: float
    embedding_model: str
    trained_on: str = ""
    version: int = FORMAT_VERSION

    def window_scores(self, vectors: np.ndarray) -> np.ndarray:
        """The probe's score (a logit) of each row of `vectors` (unit-length embeddings)."""
        return vectors @ self.weights + self.bias

    def as_json(self) -> dict:
        """The model as stored in `MODEL_FILE`."""
        return {
            "version": self.version,
            "embedding_model": self.embedding_model,
            "trained_on": self.trained_on,
            "window": WINDOW,
            "stride": STRIDE,
            "threshold": round(float(self.threshold), 6),
            "bias": round(float(self.bias), 6),
            "weights": [round(float(w), 6) for w in self.weights],
        }


def from_json(data: dict) -> InjectionModel:
    """An `InjectionModel` from its stored form; `ValueError` for another format version."""
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"injection model format {data.get('version')!r}, expected {FORMAT_VERSION}")
    return InjectionModel(
        weights=np.asarray(data["weights"], dtype=np.float32),
        bias=float(data["bias"]),
        threshold=float(data["threshold"]),
        embedding_model=data["embedding_model"],
        trained_on=data.get("trained_on", ""),
        version=data["version"],
    )


def save(model: InjectionModel, path: Path = MODEL_FILE) -> None:
    """Write `model` to `path` (and forget the one loaded from there, so the next call reads it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model.as_json(), separators=(",", ":")) + "\n")
    with _lock:
        _loaded.pop(path, None)


_lock = threading.Lock()
_loaded: dict[Path, InjectionModel | None] = {}


def packaged(path: Path) -> InjectionModel | None:
    """The model stored at `path` (read once per process), or None when there is none."""
    with _lock:
        if path not in _loaded:
            _loaded[path] = from_json(json.loads(path.read_bytes())) if path.is_file() else None
        return _loaded[path]


def injection_model() -> InjectionModel | None:
    """The packaged question model (read once per process), or None when there is none."""
    return packaged(MODEL_FILE)


def embedding_scores(texts: list[str], model: InjectionModel | None) -> np.ndarray | None:
    """`model`'s score of each of `texts`, or None when it cannot apply (no model, a model trained
    for another embedding model, the embedding model missing, or no texts)."""
    from django.conf import settings

    from rag.ingest import embedding

    if model is None or not texts or model.embedding_model != settings.EMBEDDING_MODEL:
        return None
    try:
        vectors = embedding.embed(texts)
    except embedding.EmbeddingModelUnavailable as exc:
        logger.warning("Learned injection detector skipped: %s", exc)
        return None
    return model.window_scores(vectors)


def windows(text: str) -> list[str]:
    """`text` (NFKC, whitespace collapsed) in windows of `WINDOW` characters every `STRIDE`, the
    last one ending with the text (at most `MAX_WINDOWS`, spread evenly); a short text is one
    window, an empty one none."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    if len(text) <= WINDOW:
        return [text] if text else []
    starts = [*range(0, len(text) - WINDOW, STRIDE), len(text) - WINDOW]
    if len(starts) > MAX_WINDOWS:
        starts = [starts[round(n * (len(starts) - 1) / (MAX_WINDOWS - 1))] for n in range(MAX_WINDOWS)]
    return [text[start : start + WINDOW] for start in starts]


def model_score(text: str, model: InjectionModel | None = None) -> float | None:
    """The model's score of `text` (its highest window's), or None when no model applies (none
    packaged, trained for another embedding model, the embedding model missing, or no text)."""
    scores = embedding_scores(windows(text), model or injection_model())
    return None if scores is None else float(scores.max())


def looks_like_injection(text: str) -> bool:
    """Whether the learned detector flags `text` (score at or above the model's threshold)."""
    model = injection_model()
    score = model_score(text, model)
    return score is not None and score >= model.threshold
