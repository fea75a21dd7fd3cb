"""The learned clause model: for each clause type, a linear probe over a paragraph's words, and
the calibration that turns its score into a probability.

A probe scores a paragraph as `w · features + b`, the features being TF-IDF weights of its words
and word pairs (rag.review.lexicon). It is trained on paragraphs (the lawyers' clause spans mark
the positive ones) and applied to a document's paragraphs (rag.review.signals): a document's score
is its best evidence paragraph's, and `P = sigmoid(a · score + bias)`, with `a`, `bias` and the
decision `threshold` fitted on matters held out from the probes' training (`rag.review.train`,
`manage.py review_train`). The model is kept in `data/clause_model.json` with its vocabulary.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .lexicon import NGRAMS, TOKEN, Lexicon

MODEL_FILE = Path(__file__).resolve().parent / "data" / "clause_model.json"
# A verdict the review is fairly sure of. The decision threshold is recall-minded (a lawyer checks
# every document a list names); between it and this, a document holds the clause about as often as
# not (dev presence questions, in sample: 75 of 146), so answers say which names to check.
SURE = 0.6
# What a stored signal holds (rag.review.signals); a new format makes older signals outdated like a
# new model does. 2: the next-best evidence paragraphs (`ClauseSignal.more`) are kept too. 3: probes
# read words (rag.review.lexicon), not embeddings.
SIGNALS_FORMAT = 3


@dataclass(frozen=True)
class Probe:
    weights: np.ndarray  # one per feature of the model's lexicon
    bias: float


@dataclass(frozen=True)
class ClauseModel:
    lexicon: Lexicon  # the features the probes read (rag.review.lexicon)
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

    def paragraph_scores(self, keys, texts) -> np.ndarray:
        """(len(texts), len(keys)) probe scores of each text for each of the clause types `keys`."""
        weights = np.stack([self.probes[key].weights for key in keys], axis=1)
        biases = np.array([self.probes[key].bias for key in keys], dtype=np.float32)
        return self.lexicon.scores(texts, weights, biases)

    def as_json(self) -> dict:
        return {
            "features": {
                "kind": "tfidf",
                "token": TOKEN,
                "ngrams": list(NGRAMS),
                "vocabulary": list(self.lexicon.vocabulary),
                "idf": [round(float(x), 5) for x in self.lexicon.idf],
            },
            "trained_on": self.trained_on,
            "combiner": list(self.combiner),
            "threshold": self.threshold,
            "probes": {
                key: {
                    "bias": probe.bias,
                    # sparse: the features a probe weighs (a dense row is mostly zeros once pruned)
                    "weights": [
                        [int(i), round(float(probe.weights[i]), 4)] for i in np.flatnonzero(probe.weights)
                    ],
                }
                for key, probe in sorted(self.probes.items())
            },
        }


def from_json(data: dict, version: str = "") -> ClauseModel:
    features = data["features"]
    expected = ("tfidf", TOKEN, NGRAMS)
    if (features.get("kind"), features.get("token"), tuple(features.get("ngrams", ()))) != expected:
        raise ValueError("the clause model file was written for other features")
    lexicon = Lexicon(tuple(features["vocabulary"]), np.asarray(features["idf"], dtype=np.float64))
    return ClauseModel(
        lexicon=lexicon,
        probes={key: _probe(value, len(lexicon.vocabulary)) for key, value in data["probes"].items()},
        combiner=tuple(data["combiner"]),
        threshold=float(data.get("threshold", 0.5)),
        trained_on=data.get("trained_on", ""),
        version=version,
    )


def _probe(value: dict, size: int) -> Probe:
    weights = np.zeros(size, dtype=np.float32)
    for index, weight in value["weights"]:
        weights[index] = weight
    return Probe(weights, float(value["bias"]))


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
    """A digest of what a document's signals depend on: the probes, the features they read and the
    signals' format (a new calibration or threshold keeps the signals)."""
    probes = json.dumps([data["features"], data["probes"], SIGNALS_FORMAT], sort_keys=True).encode()
    return hashlib.sha256(probes).hexdigest()[:16]


def save(model: ClauseModel, path: Path = MODEL_FILE) -> None:
    global _loaded
    path.write_text(json.dumps(model.as_json(), separators=(",", ":")))
    with _lock:
        _loaded = None
