"""The learned clause model: for each clause type, a linear probe over embeddings, and the
calibration that turns its score into a probability.

A probe scores a text as `w · embedding + b` with the search's own embedding model. It is
trained on passages (the lawyers' clause spans mark the positive ones) and applied to a
document's paragraphs (rag.review.signals): a document's score is its best evidence paragraph's,
and `P = sigmoid(a · score + bias)`, with `a`, `bias` and the decision `threshold` fitted on
matters held out from the probes' training (`rag.review.train`, `manage.py review_train`). The
model is kept in `data/clause_model.json` with the embedding model it belongs to.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MODEL_FILE = Path(__file__).resolve().parent / "data" / "clause_model.json"
# A verdict the review is fairly sure of. The decision threshold is recall-minded (a lawyer checks
# every document a list names); between it and this, a document holds the clause about as often as
# not (dev presence questions, in sample: 75 of 146), so answers say which names to check.
SURE = 0.6
# What a stored signal holds (rag.review.signals); a new format makes older signals outdated like a
# new model does. 2: the next-best evidence paragraphs (`ClauseSignal.more`) are kept too.
SIGNALS_FORMAT = 2


@dataclass(frozen=True)
class Probe:
    weights: np.ndarray
    bias: float


@dataclass(frozen=True)
class ClauseModel:
    embedding_model: str
    probes: dict[str, Probe]  # column key → probe
    combiner: tuple[float, float]  # P = sigmoid(a · score + bias)
    threshold: float  # a document holds the clause at this probability or more
    trained_on: str  # what the labels were (for the docs and the admin)
    version: str = ""  # probes_digest: signals of another version are recomputed

    def probability(self, probe_score: float) -> float:
        """The probability that a document whose best evidence paragraph scores `probe_score`
        holds the clause (calibrated on held-out matters)."""
        a, bias = self.combiner
        return 1.0 / (1.0 + math.exp(-max(min(a * probe_score + bias, 30.0), -30.0)))

    def as_json(self) -> dict:
        return {
            "embedding_model": self.embedding_model,
            "trained_on": self.trained_on,
            "combiner": list(self.combiner),
            "threshold": self.threshold,
            "probes": {
                key: {"bias": probe.bias, "weights": [round(float(w), 6) for w in probe.weights]}
                for key, probe in sorted(self.probes.items())
            },
        }


def from_json(data: dict, version: str = "") -> ClauseModel:
    return ClauseModel(
        embedding_model=data["embedding_model"],
        probes={
            key: Probe(np.asarray(value["weights"], dtype=np.float32), float(value["bias"]))
            for key, value in data["probes"].items()
        },
        combiner=tuple(data["combiner"]),
        threshold=float(data.get("threshold", 0.5)),
        trained_on=data.get("trained_on", ""),
        version=version,
    )


_lock = threading.Lock()
_loaded: ClauseModel | None = None


def clause_model() -> ClauseModel | None:
    """The packaged clause model (loaded once per process), or None when none is packaged."""
    global _loaded
    with _lock:
        if _loaded is None and MODEL_FILE.is_file():
            data = json.loads(MODEL_FILE.read_bytes())
            _loaded = from_json(data, probes_digest(data))
        return _loaded


def probes_digest(data: dict) -> str:
    """A digest of what a document's signals depend on: the probes, their embedding model and the
    signals' format (a new calibration or threshold keeps the signals)."""
    probes = json.dumps([data["embedding_model"], data["probes"], SIGNALS_FORMAT], sort_keys=True).encode()
    return hashlib.sha256(probes).hexdigest()[:16]


def save(model: ClauseModel, path: Path = MODEL_FILE) -> None:
    global _loaded
    path.write_text(json.dumps(model.as_json(), separators=(",", ":")))
    with _lock:
        _loaded = None
