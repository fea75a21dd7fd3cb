"""The words a clause model reads: a paragraph as TF-IDF weights of its words and word pairs.

A clause type is written with its own vocabulary ("shall not, directly or indirectly, compete",
"right of first refusal", "liquidated damages"), and a linear probe over these weights tells the
clause from its neighbours better than one over the paragraph's MiniLM embedding: held out by
matter, AUC 0.930 against 0.903 and list F1 72 against 64 (bench/README.md, "Clause probes that
read words"). The features are those of scikit-learn's `TfidfVectorizer(ngram_range=(1, 2),
sublinear_tf=True)`, which `rag.review.train` fits; this module computes them without it (the
product only reads the vocabulary and the inverse document frequencies the model file keeps), and
a test holds the two equal.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

# scikit-learn's default token: a run of two or more word characters.
TOKEN = r"(?u)\b\w\w+\b"  # noqa: S105 (a word pattern, not a secret)
_TOKEN = re.compile(TOKEN)
NGRAMS = (1, 2)


def terms(text: str) -> list[str]:
    """The words of `text` (lowercased) followed by its word pairs, as the vectorizer counts them."""
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


@dataclass(frozen=True)
class Lexicon:
    vocabulary: tuple[str, ...]  # feature index → term
    idf: np.ndarray  # inverse document frequency per feature
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "index", {term: i for i, term in enumerate(self.vocabulary)})

    def features(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The non-zero features of `text`: indices and unit-length TF-IDF values
        (1 + log count, times idf, L2-normalised)."""
        counts = Counter(i for term in terms(text) if (i := self.index.get(term)) is not None)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        indices = np.fromiter(counts, dtype=np.int64, count=len(counts))
        values = np.array([1.0 + math.log(counts[i]) for i in indices]) * self.idf[indices]
        return indices, (values / np.linalg.norm(values)).astype(np.float32)

    def scores(self, texts, weights: np.ndarray, biases: np.ndarray) -> np.ndarray:
        """(len(texts), k) linear scores of each text under `weights` (vocabulary by k) and
        `biases` (k)."""
        rows = np.empty((len(texts), weights.shape[1]), dtype=np.float32)
        for row, text in enumerate(texts):
            indices, values = self.features(text)
            rows[row] = values @ weights[indices] if len(indices) else 0.0
        return rows + biases
