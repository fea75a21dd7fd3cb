"""The orchestration spec's ranking engine (pure: no ORM, no settings except `Weights.from_settings`).

rank_score = similarity * w.similarity + recency_boost * w.recency + source_trust * w.trust

- `recency_boost` comes from the spec's table of document age bands (`RECENCY_BANDS`),
- `source_trust` from the spec's table of source types (`rag.models.SOURCE_TRUST`),
- the weights from the tenant's `RankingWeights` row or the `RAG_*_WEIGHT` settings
  (`rag.selectors.ranking_weights_get`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from numbers import Real
from typing import TypeVar

from django.conf import settings

from rag.models import RANKING_WEIGHT_MAX, SOURCE_TRUST

__all__ = [
    "RECENCY_BANDS",
    "RankScores",
    "Weights",
    "rank",
    "rank_score",
    "recency_boost",
    "source_trust",
]

T = TypeVar("T")

# (largest age in days, boost), youngest band first. Each upper bound is inclusive: a document
# exactly 30 days old still gets 0.3, one 31 days old gets 0.2; 90 → 0.2, 91 → 0.1;
# 365 → 0.1, 366 → 0.0. Age is whole calendar days, `today - document_date`.
RECENCY_BANDS: tuple[tuple[int, float], ...] = (
    (30, 0.3),
    (90, 0.2),
    (365, 0.1),
)
OLDER_BOOST = 0.0


def recency_boost(document_date: date | None, *, today: date) -> float:
    """The spec's recency boost for a document dated `document_date`, seen on `today`.

    Undated documents get 0.0 (nothing to prefer them for); a future date counts as age 0 (a
    judgment dated tomorrow is as recent as one dated today).
    """
    if document_date is None:
        return OLDER_BOOST
    age_days = max((today - document_date).days, 0)
    for max_age_days, boost in RECENCY_BANDS:
        if age_days <= max_age_days:
            return boost
    return OLDER_BOOST


def source_trust(source_type: str) -> float:
    """The spec's trust score of a source type (`rag.models.SourceType` value).

    An unknown source type is a ValueError rather than a default: silently ranking an unmapped
    source as "untrusted" would hide a missing table entry.
    """
    try:
        return SOURCE_TRUST[source_type]
    except KeyError:
        raise ValueError(
            f"unknown source type {source_type!r}; expected one of {', '.join(map(str, SOURCE_TRUST))}"
        ) from None


@dataclass(frozen=True)
class Weights:
    """The three ranking weights. Each is a finite number in 0..RANKING_WEIGHT_MAX, and at least one
    is above zero (all zero would score every passage 0 and make the order meaningless)."""

    similarity: float
    recency: float
    trust: float

    def __post_init__(self) -> None:
        for name in ("similarity", "recency", "trust"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Real):
                raise ValueError(f"{name} weight must be a number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"{name} weight must be finite, got {value!r}")
            if not 0.0 <= value <= RANKING_WEIGHT_MAX:
                raise ValueError(f"{name} weight must be between 0 and {RANKING_WEIGHT_MAX:g}, got {value!r}")
            object.__setattr__(self, name, value)  # ints become floats; frozen otherwise
        if self.similarity == self.recency == self.trust == 0.0:
            raise ValueError("at least one ranking weight must be greater than 0")

    @classmethod
    def from_settings(cls) -> Weights:
        """The deployment defaults: RAG_SIMILARITY_WEIGHT, RAG_RECENCY_WEIGHT, RAG_TRUST_WEIGHT
        (0.7 / 0.2 / 0.1 in base settings), read at call time; invalid values are a ValueError."""
        return cls(
            similarity=settings.RAG_SIMILARITY_WEIGHT,
            recency=settings.RAG_RECENCY_WEIGHT,
            trust=settings.RAG_TRUST_WEIGHT,
        )


def rank_score(*, similarity: float, recency_boost: float, source_trust: float, weights: Weights) -> float:
    """The spec's formula, nothing else (no normalisation by the sum of the weights)."""
    return similarity * weights.similarity + recency_boost * weights.recency + source_trust * weights.trust


@dataclass(frozen=True)
class RankScores:
    """Every input of one item's rank score, kept for explanations and debugging."""

    similarity: float
    recency_boost: float
    source_trust: float
    rank_score: float


def rank(
    items: Sequence[T],
    *,
    weights: Weights,
    today: date,
    similarity: Callable[[T], float],
    document_date: Callable[[T], date | None],
    source_type: Callable[[T], str],
) -> list[tuple[T, RankScores]]:
    """`items` with their scores, best rank score first.

    The sort is stable, so items with equal scores keep their input (retrieval) order. `items` is
    not modified. A non-finite similarity is a ValueError: NaN would make the order undefined.
    """
    scored: list[tuple[T, RankScores]] = []
    for position, item in enumerate(items):
        item_similarity = float(similarity(item))
        if not math.isfinite(item_similarity):
            raise ValueError(f"item {position} has a non-finite similarity {item_similarity!r}")
        boost = recency_boost(document_date(item), today=today)
        trust = source_trust(source_type(item))
        score = rank_score(
            similarity=item_similarity, recency_boost=boost, source_trust=trust, weights=weights
        )
        scored.append((item, RankScores(item_similarity, boost, trust, score)))
    return sorted(scored, key=lambda pair: -pair[1].rank_score)
