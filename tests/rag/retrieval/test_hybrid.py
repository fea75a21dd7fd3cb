"""Hybrid search: weighted reciprocal rank fusion (pure), modes, and both legs end to end."""

from __future__ import annotations

import pytest

from rag.ingest import embedding
from rag.models import Chunk
from rag.retrieval import Hit, hybrid_search, keyword_search, semantic_search, weighted_rrf
from rag.retrieval.hybrid import MODES
from ragsite.exceptions import InvalidQuery


def test_rrf_sums_weight_over_k_plus_rank():
    fused = dict(weighted_rrf([[1, 2, 3], [3, 1, 4]], [1.0, 1.0], rrf_k=60))
    assert fused == pytest.approx({1: 1 / 61 + 1 / 62, 2: 1 / 62, 3: 1 / 63 + 1 / 61, 4: 1 / 63})
    assert [item for item, _ in weighted_rrf([[1, 2, 3], [3, 1, 4]], [1.0, 1.0])] == [1, 3, 2, 4]


def test_rrf_weights_and_k_change_the_order():
    semantic, keyword = [10, 20], [20, 30]
    assert [i for i, _ in weighted_rrf([semantic, keyword], [1.0, 1.0], rrf_k=60)] == [20, 10, 30]
    # A heavy keyword leg puts its own first hit on top and its second above the semantic one.
    assert [i for i, _ in weighted_rrf([semantic, keyword], [1.0, 3.0], rrf_k=60)] == [20, 30, 10]
    # With a zero weight, that leg's hits are ranked behind, not dropped.
    assert [i for i, _ in weighted_rrf([semantic, keyword], [1.0, 0.0], rrf_k=1)] == [10, 20, 30]
    assert dict(weighted_rrf([[5]], [2.0], rrf_k=0)) == {5: 2.0}


def test_rrf_ties_go_to_the_better_rank_then_the_smaller_id():
    assert [i for i, _ in weighted_rrf([[7, 8], [8, 7]], [1.0, 1.0])] == [7, 8]
    assert [i for i, _ in weighted_rrf([[9], [4]], [1.0, 1.0])] == [4, 9]
    assert weighted_rrf([[], []], [1.0, 1.0]) == []
    assert [i for i, _ in weighted_rrf([[1, 1, 2]], [1.0])] == [1, 2]  # duplicates count once


@pytest.mark.parametrize(
    "bad",
    [
        {"mode": "vector"},
        {"weights": (-1.0, 1.0)},
        {"weights": (0, 0)},
        {"weights": (1.0,)},
        {"rrf_k": -1},
        {"k": 0},
        {"candidates": 0},
    ],
)
def test_invalid_parameters_are_invalid_queries(tenant, bad):
    with pytest.raises(InvalidQuery) as caught:
        hybrid_search(tenant=tenant, query="termination", **{"k": 3, **bad})
    assert set(caught.value.details) <= {"mode", "weights", "rrf_k", "k", "candidates"}


@pytest.mark.django_db
def test_hybrid_returns_hits_from_both_legs_with_both_scores(case, upload, ingest_text, embedded_texts):
    contract = upload(case, "contract.docx").document
    motion = ingest_text(
        case, "Dismissed under Rule 12(b)(6) for want of a plausible claim.", filename="m.txt"
    )
    query = "Which state's law governs this agreement? Rule 12(b)(6)"
    embedded_texts.clear()

    hits = hybrid_search(tenant=case.tenant, query=query, k=3)

    assert embedded_texts == [query]  # the query is embedded once, for both legs
    assert len(hits) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    keyword_only = [h for h in hits if h.document_id == motion.pk]
    semantic_only = [h for h in hits if h.keyword_score is None]
    assert keyword_only and keyword_only[0].keyword_score is not None  # the keyword leg's hit
    assert semantic_only and semantic_only[0].document_id == contract.pk  # the semantic leg's
    assert "State of Colorado" in " ".join(
        Chunk.objects.filter(pk__in=[h.chunk_id for h in semantic_only]).values_list("text", flat=True)
    )
    assert all(h.similarity is not None and -1 <= h.similarity <= 1 for h in hits)
    assert all(0 < h.score <= 2 / 61 for h in hits)


@pytest.mark.django_db
def test_single_leg_modes_return_that_leg(case, upload):
    upload(case, "contract.docx")
    query = "termination before delivery"
    keyword = hybrid_search(tenant=case.tenant, query=query, k=2, mode="keyword")
    assert keyword == keyword_search(tenant=case.tenant, query=query, k=2)
    semantic = hybrid_search(tenant=case.tenant, query=query, k=2, mode="semantic")
    vector = embedding.embed([query])[0]
    assert semantic == semantic_search(tenant=case.tenant, query_vector=vector, k=2)
    assert all(isinstance(h, Hit) and h.similarity == h.score for h in semantic)


@pytest.mark.django_db
@pytest.mark.parametrize("mode", MODES)
def test_a_blank_query_returns_nothing(tenant, mode):
    assert hybrid_search(tenant=tenant, query="  ", k=3, mode=mode) == []
