"""The learned clause model: for each clause type, a linear probe over the passages' embeddings
and a combiner that weighs it with the cross-encoder.

A passage's probe score is `w · embedding + b`: one inner product with the vector search's own
stored embedding, so a matter of any size is scored in one SQL query and nothing is computed at
ingestion. A document's verdict reads its best probe score and the cross-encoder's relevance of
the best window of its best passages for the clause's question (`rag.review.classify`):

    P(clause) = sigmoid(a · probe + c · logit(window) + bias)

The probes and the combiner are trained on lawyers' labels (`rag.review.train`, `manage.py
review_train`) and kept in `data/clause_model.json` with the embedding model they were trained
for; chunks of another embedding model have no probe score, and the model is not used for them.
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


@dataclass(frozen=True)
class Probe:
    weights: np.ndarray
    bias: float


@dataclass(frozen=True)
class ClauseModel:
    embedding_model: str
    probes: dict[str, Probe]  # column key → probe
    combiner: tuple[float, float, float]  # a (probe), c (window logit), bias
    candidate_floor: float  # a document whose best probe score is below this is no candidate
    threshold: float  # a document holds the clause at this probability or more
    trained_on: str  # what the labels were (for the docs and the admin)
    version: str = ""  # a digest of the model file: signals of another version are recomputed

    def probability(self, probe_score: float, window_logit: float) -> float:
        a, c, bias = self.combiner
        return 1.0 / (1.0 + math.exp(-(a * probe_score + c * window_logit + bias)))

    def as_json(self) -> dict:
        return {
            "embedding_model": self.embedding_model,
            "trained_on": self.trained_on,
            "combiner": list(self.combiner),
            "candidate_floor": self.candidate_floor,
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
        candidate_floor=float(data["candidate_floor"]),
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
            raw = MODEL_FILE.read_bytes()
            _loaded = from_json(json.loads(raw), hashlib.sha256(raw).hexdigest()[:16])
        return _loaded


def save(model: ClauseModel, path: Path = MODEL_FILE) -> None:
    global _loaded
    path.write_text(json.dumps(model.as_json(), separators=(",", ":")))
    with _lock:
        _loaded = None


def window_logit(relevance: float | None) -> float:
    """The cross-encoder's 0..1 relevance back as a logit (a missing window counts as unrelated)."""
    if relevance is None:
        return -10.0
    relevance = min(max(relevance, 1e-6), 1 - 1e-6)
    return math.log(relevance / (1 - relevance))
