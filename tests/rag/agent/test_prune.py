"""Evidence pruning: each call's results on its own scale, fused by rank; duplicates once;
results far below their call's best dropped; at most `limit`."""

from rag.agent.loop import prune
from rag.agent.tools import Evidence
from rag.retrieval.service import Passage


def passage(chunk_id: int, score: float) -> Passage:
    return Passage(
        chunk_id=chunk_id, document_id=1, title="t", source="s", source_type="user_upload", doc_type="other",
        jurisdiction="", date=None, page_start=1, page_end=1, section_title="", char_start=0, char_end=1,
        text="x", snippet="x", snippet_start=0, snippet_end=1, similarity_score=score, rank_score=score,
        recency_boost=0.0, source_trust=0.5, cosine_similarity=None, keyword_score=None, routed=False,
    )  # fmt: skip


def test_calls_are_fused_by_rank_not_by_their_raw_scores():
    keyword = [Evidence(passage(1, 0.9), 1, "search_text"), Evidence(passage(2, 0.8), 1, "search_text")]
    # The semantic scale is lower, but chunk 2 is its best: found first by one call and second by
    # the other, it outranks chunk 1, found by one call only.
    semantic = [
        Evidence(passage(2, 0.4), 2, "search_semantic"),
        Evidence(passage(3, 0.35), 2, "search_semantic"),
    ]
    kept = prune(keyword + semantic, limit=10)
    assert [item.passage.chunk_id for item in kept] == [2, 1, 3]


def test_results_far_below_their_calls_best_are_dropped_and_the_limit_holds():
    items = [Evidence(passage(i, score), 1, "search_text") for i, score in enumerate([0.9, 0.5, 0.44, 0.1])]
    assert [item.passage.chunk_id for item in prune(items, limit=10)] == [0, 1]  # 0.44 < 0.45
    assert [item.passage.chunk_id for item in prune(items, limit=1)] == [0]
    assert prune([], limit=5) == []
