"""The ranking engine against the orchestration spec's tables (pure: no database)."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, dataclass
from datetime import date, timedelta

import pytest

from rag.models import SourceType
from rag.retrieval.ranking import (
    RECENCY_BANDS,
    RankScores,
    Weights,
    rank,
    rank_score,
    recency_boost,
    source_trust,
)

TODAY = date(2026, 11, 22)
DEFAULT = Weights(similarity=0.7, recency=0.2, trust=0.1)


def days_ago(days: int) -> date:
    return TODAY - timedelta(days=days)


# --- recency ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age_days", "boost"),
    [
        (0, 0.3),
        (1, 0.3),
        (30, 0.3),  # "last 30 days" includes day 30
        (31, 0.2),
        (90, 0.2),
        (91, 0.1),
        (365, 0.1),
        (366, 0.0),
        (10_000, 0.0),
    ],
)
def test_recency_boost_follows_the_spec_bands_with_inclusive_upper_bounds(age_days, boost):
    assert recency_boost(days_ago(age_days), today=TODAY) == boost


def test_recency_bands_are_the_spec_table():
    assert RECENCY_BANDS == ((30, 0.3), (90, 0.2), (365, 0.1))


def test_recency_age_is_calendar_days_across_a_leap_year():
    # 2024-02-29 exists: 2024-01-31 → 2024-03-01 is 30 days, 2024-01-30 → 2024-03-01 is 31.
    assert recency_boost(date(2024, 1, 31), today=date(2024, 3, 1)) == 0.3
    assert recency_boost(date(2024, 1, 30), today=date(2024, 3, 1)) == 0.2


def test_an_undated_document_gets_no_boost():
    assert recency_boost(None, today=TODAY) == 0.0


def test_a_future_date_counts_as_age_zero():
    assert recency_boost(TODAY + timedelta(days=1), today=TODAY) == 0.3
    assert recency_boost(TODAY + timedelta(days=4000), today=TODAY) == 0.3


# --- source trust -------------------------------------------------------------------------------

SPEC_TRUST = {
    "supreme_court": 1.0,
    "high_court": 0.9,
    "statute": 1.0,
    "secondary": 0.7,
    "user_upload": 0.5,
}


@pytest.mark.parametrize(("source", "trust"), SPEC_TRUST.items())
def test_source_trust_is_the_spec_table(source, trust):
    assert source_trust(source) == trust


def test_every_source_type_has_a_trust_score():
    assert set(SourceType.values) == set(SPEC_TRUST)
    assert source_trust(SourceType.HIGH_COURT) == 0.9  # the enum member works as well as its value


@pytest.mark.parametrize("unknown", ["", "blog", "Supreme Court", "SUPREME_COURT"])
def test_an_unknown_source_type_is_an_error(unknown):
    with pytest.raises(ValueError, match="unknown source type"):
        source_trust(unknown)


# --- weights ------------------------------------------------------------------------------------


def test_weights_accept_integers_and_bounds_and_store_floats():
    weights = Weights(similarity=10, recency=0, trust=0.0)
    assert (weights.similarity, weights.recency, weights.trust) == (10.0, 0.0, 0.0)
    assert isinstance(weights.similarity, float)


def test_weights_are_frozen():
    with pytest.raises(FrozenInstanceError):
        DEFAULT.similarity = 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"similarity": -0.1}, "similarity weight must be between 0 and 10"),
        ({"recency": 10.5}, "recency weight must be between 0 and 10"),
        ({"trust": math.nan}, "trust weight must be finite"),
        ({"similarity": math.inf}, "similarity weight must be finite"),
        ({"similarity": -math.inf}, "similarity weight must be finite"),
        ({"trust": "0.1"}, "trust weight must be a number"),
        ({"recency": None}, "recency weight must be a number"),
        ({"similarity": True}, "similarity weight must be a number"),
        ({"similarity": 0, "recency": 0.0, "trust": 0}, "at least one ranking weight must be greater than 0"),
    ],
)
def test_invalid_weights_are_refused_with_a_clear_message(kwargs, message):
    values = {"similarity": 0.7, "recency": 0.2, "trust": 0.1, **kwargs}
    with pytest.raises(ValueError, match=message):
        Weights(**values)


def test_weights_from_settings_defaults_to_the_spec():
    assert Weights.from_settings() == Weights(similarity=0.7, recency=0.2, trust=0.1)


def test_weights_from_settings_reads_the_current_settings(settings):
    settings.RAG_SIMILARITY_WEIGHT = 1.0
    settings.RAG_RECENCY_WEIGHT = 0.0
    settings.RAG_TRUST_WEIGHT = 2.5
    assert Weights.from_settings() == Weights(similarity=1.0, recency=0.0, trust=2.5)


def test_weights_from_invalid_settings_is_an_error(settings):
    settings.RAG_SIMILARITY_WEIGHT = 0.0
    settings.RAG_RECENCY_WEIGHT = 0.0
    settings.RAG_TRUST_WEIGHT = 0.0
    with pytest.raises(ValueError, match="at least one"):
        Weights.from_settings()


# --- score --------------------------------------------------------------------------------------


def test_rank_score_is_the_spec_formula_with_default_weights():
    # A Supreme Court judgment from last week with similarity 0.8: 0.8*0.7 + 0.3*0.2 + 1.0*0.1.
    assert rank_score(similarity=0.8, recency_boost=0.3, source_trust=1.0, weights=DEFAULT) == pytest.approx(
        0.72
    )
    # An old, undated user upload with the same similarity: 0.8*0.7 + 0 + 0.5*0.1.
    assert rank_score(similarity=0.8, recency_boost=0.0, source_trust=0.5, weights=DEFAULT) == pytest.approx(
        0.61
    )


def test_rank_score_is_not_normalised_by_the_weight_sum():
    weights = Weights(similarity=2.0, recency=1.0, trust=3.0)
    assert rank_score(similarity=0.5, recency_boost=0.2, source_trust=0.9, weights=weights) == pytest.approx(
        0.5 * 2.0 + 0.2 * 1.0 + 0.9 * 3.0
    )


# --- rank ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Passage:
    name: str
    similarity: float
    date: date | None
    source: str


def ranked(items, weights=DEFAULT):
    return rank(
        items,
        weights=weights,
        today=TODAY,
        similarity=lambda p: p.similarity,
        document_date=lambda p: p.date,
        source_type=lambda p: p.source,
    )


def test_rank_returns_every_item_with_its_scores_best_first():
    old_upload = Passage("old upload", 0.80, days_ago(400), "user_upload")  # 0.56 + 0 + 0.05 = 0.61
    recent_sc = Passage("recent SC", 0.75, days_ago(10), "supreme_court")  # 0.525 + 0.06 + 0.1 = 0.685
    statute = Passage("statute", 0.70, None, "statute")  # 0.49 + 0 + 0.1 = 0.59

    result = ranked([old_upload, recent_sc, statute])

    assert [p.name for p, _ in result] == ["recent SC", "old upload", "statute"]
    top = result[0][1]
    assert isinstance(top, RankScores)
    assert (top.similarity, top.recency_boost, top.source_trust) == (0.75, 0.3, 1.0)
    assert result[1][1].recency_boost == 0.0
    assert result[2][1].source_trust == 1.0
    assert [scores.rank_score for _, scores in result] == pytest.approx([0.685, 0.61, 0.59])


def test_weights_change_the_order():
    fresh_weak = Passage("fresh", 0.60, days_ago(5), "user_upload")
    old_strong = Passage("old", 0.90, days_ago(3000), "user_upload")
    assert [p.name for p, _ in ranked([fresh_weak, old_strong])] == ["old", "fresh"]
    recency_heavy = Weights(similarity=0.1, recency=5.0, trust=0.0)
    assert [p.name for p, _ in ranked([fresh_weak, old_strong], recency_heavy)] == ["fresh", "old"]


def test_ties_keep_the_retrieval_order():
    items = [Passage(f"p{i}", 0.5, days_ago(60), "high_court") for i in range(5)]
    better = Passage("better", 0.9, days_ago(60), "high_court")
    assert [p.name for p, _ in ranked([*items[:2], better, *items[2:]])] == [
        "better",
        "p0",
        "p1",
        "p2",
        "p3",
        "p4",
    ]
    assert [p.name for p, _ in ranked(items[::-1])] == ["p4", "p3", "p2", "p1", "p0"]


def test_a_tie_from_different_parts_keeps_the_retrieval_order():
    equal = Weights(similarity=1.0, recency=1.0, trust=1.0)
    statute = Passage("statute", 0.5, None, "statute")  # 0.5 + 0 + 1.0 = 1.5
    upload = Passage("upload", 1.0, None, "user_upload")  # 1.0 + 0 + 0.5 = 1.5
    assert [p.name for p, _ in ranked([statute, upload], equal)] == ["statute", "upload"]
    assert [p.name for p, _ in ranked([upload, statute], equal)] == ["upload", "statute"]


def test_rank_does_not_modify_its_input():
    items = [
        Passage("a", 0.1, None, "secondary"),
        Passage("b", 0.9, days_ago(1), "supreme_court"),
    ]
    snapshot = list(items)
    result = ranked(items)
    assert items == snapshot
    assert [p.name for p, _ in result] == ["b", "a"]
    assert result is not items


def test_rank_of_nothing_is_empty():
    assert ranked([]) == []


def test_rank_refuses_a_nan_similarity_and_an_unknown_source():
    with pytest.raises(ValueError, match="item 1 has a non-finite similarity"):
        ranked([Passage("a", 0.5, None, "statute"), Passage("b", math.nan, None, "statute")])
    with pytest.raises(ValueError, match="unknown source type"):
        ranked([Passage("a", 0.5, None, "wiki")])
