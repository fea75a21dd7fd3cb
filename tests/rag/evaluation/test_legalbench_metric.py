"""LegalBench-RAG's metric: precision@k and recall@k over character spans, checked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.evaluation.legalbench import DEFAULT_KS, BenchmarkQuery, Span, load_queries, precision, recall, score

DEV_DIR = Path("/work/shared/eval/legalbench-cuad")
A, B = "cuad/a.txt", "cuad/b.txt"


def s(start: int, end: int, file_path: str = A) -> Span:
    return Span(file_path, start, end)


# --- precision and recall of one query ------------------------------------------------------


def test_exact_match_is_perfect():
    assert precision([s(10, 20)], [s(10, 20)]) == 1.0
    assert recall([s(10, 20)], [s(10, 20)]) == 1.0


def test_retrieved_span_containing_the_gold():
    # 100 retrieved characters, 20 of them gold: all of the gold found, a fifth of the text useful.
    assert precision([s(0, 100)], [s(40, 60)]) == pytest.approx(0.2)
    assert recall([s(0, 100)], [s(40, 60)]) == 1.0


def test_retrieved_span_inside_the_gold():
    assert precision([s(40, 60)], [s(0, 100)]) == 1.0
    assert recall([s(40, 60)], [s(0, 100)]) == pytest.approx(0.2)


def test_partial_overlap():
    # gold [10, 30), retrieved [20, 60): 10 characters in common.
    assert precision([s(20, 60)], [s(10, 30)]) == pytest.approx(10 / 40)
    assert recall([s(20, 60)], [s(10, 30)]) == pytest.approx(10 / 20)


def test_touching_spans_do_not_overlap():
    assert precision([s(0, 10)], [s(10, 20)]) == 0.0
    assert recall([s(0, 10)], [s(10, 20)]) == 0.0


def test_same_offsets_in_another_file_score_nothing():
    assert precision([s(10, 20, B)], [s(10, 20, A)]) == 0.0
    assert recall([s(10, 20, B)], [s(10, 20, A)]) == 0.0


def test_overlapping_retrieved_spans_cover_gold_characters_once():
    gold = [s(0, 100)]
    retrieved = [s(0, 60), s(40, 100)]  # 40..60 retrieved twice
    assert recall(retrieved, gold) == 1.0  # not 120/100
    assert precision(retrieved, gold) == 1.0

    # The same text retrieved twice: recall counts it once, precision counts each span's characters.
    gold = [s(0, 50)]
    retrieved = [s(0, 100), s(0, 100)]
    assert recall(retrieved, gold) == 1.0
    assert precision(retrieved, gold) == pytest.approx((50 + 50) / 200)

    # Three overlapping retrievals, one contained in another, against gold [10, 50).
    retrieved = [s(0, 30), s(5, 15), s(25, 45)]
    assert recall(retrieved, [s(10, 50)]) == pytest.approx(35 / 40)  # covered: 10..45
    assert precision(retrieved, [s(10, 50)]) == pytest.approx((20 + 5 + 20) / (30 + 10 + 20))


def test_multiple_gold_spans():
    gold = [s(0, 10), s(50, 70), s(0, 30, B)]  # 10 + 20 + 30 = 60 gold characters
    # Finds all of the first, half of the second, none of the third (wrong place in B).
    retrieved = [s(0, 10), s(60, 80), s(40, 60, B)]
    assert recall(retrieved, gold) == pytest.approx((10 + 10) / 60)
    assert precision(retrieved, gold) == pytest.approx((10 + 10 + 0) / (10 + 20 + 20))

    # One retrieved span across two gold spans of the same file.
    assert precision([s(0, 100)], [s(0, 10), s(50, 70)]) == pytest.approx(30 / 100)
    assert recall([s(0, 100)], [s(0, 10), s(50, 70)]) == 1.0


def test_nothing_retrieved_scores_zero():
    assert precision([], [s(0, 10)]) == 0.0
    assert recall([], [s(0, 10)]) == 0.0


# --- score(): the k cut-off, averaging, percent ---------------------------------------------


def test_score_counts_only_the_first_k_spans():
    gold = [s(100, 200)]
    retrieved = [s(0, 100), s(100, 200), s(150, 250)]  # best first: a miss, the gold, half gold
    result = score([(retrieved, gold)], ks=[1, 2, 3, 10])
    assert result["1"] == {"precision": 0.0, "recall": 0.0}
    assert result["2"]["precision"] == pytest.approx(50.0)  # 100 of 200 characters
    assert result["2"]["recall"] == pytest.approx(100.0)
    assert result["3"]["precision"] == pytest.approx(100 * 150 / 300)
    assert result["3"]["recall"] == pytest.approx(100.0)
    assert result["10"] == result["3"]  # fewer spans than k: all of them count


def test_score_averages_queries_in_percent():
    runs = [
        ([s(0, 10)], [s(0, 10)]),  # P 1,    R 1
        ([s(0, 40)], [s(0, 10)]),  # P 0.25, R 1
        ([], [s(0, 10)]),  # P 0,    R 0
        ([s(0, 10, B)], [s(0, 20, B)]),  # P 1,    R 0.5
    ]
    result = score(runs, ks=[4])
    assert list(result) == ["4"]
    assert result["4"]["precision"] == pytest.approx(100 * (1 + 0.25 + 0 + 1) / 4)
    assert result["4"]["recall"] == pytest.approx(100 * (1 + 1 + 0 + 0.5) / 4)


def test_score_default_ks_and_no_queries():
    result = score([])
    assert list(result) == [str(k) for k in DEFAULT_KS] == ["1", "2", "4", "8", "16", "32", "64"]
    assert all(values == {"precision": 0.0, "recall": 0.0} for values in result.values())


def test_score_does_not_change_its_input():
    retrieved = [s(0, 10), s(10, 20)]
    score([(retrieved, [s(0, 10)])], ks=[1])
    assert retrieved == [s(0, 10), s(10, 20)]


# --- Span ------------------------------------------------------------------------------------


def test_span_length_and_validation():
    assert len(s(3, 10)) == 7
    assert len(s(0, 1)) == 1
    for start, end in [(5, 5), (10, 5), (-1, 5), (-5, -1)]:
        with pytest.raises(ValueError, match="bad span"):
            Span(A, start, end)


# --- load_queries ------------------------------------------------------------------------------


def write(tmp_path: Path, data) -> Path:
    path = tmp_path / "queries.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_load_queries_reads_the_legalbench_format(tmp_path):
    path = write(
        tmp_path,
        {
            "tests": [
                {
                    "query": "Consider the lease between Initech and Umbrella; who pays the rent?",
                    "snippets": [
                        {"file_path": A, "span": [5, 25], "answer": "x"},
                        {"file_path": B, "span": [0, 3], "answer": "y"},
                    ],
                    "tags": ["cuad"],
                    "query_id": "cuad-0001",
                    "cuad_category": "Rent",
                },
                {"query": "What law governs?", "snippets": [{"file_path": A, "span": [7, 9]}]},
            ]
        },
    )
    assert load_queries(path) == [
        BenchmarkQuery(
            query_id="cuad-0001",
            query="Consider the lease between Initech and Umbrella; who pays the rent?",
            gold=(Span(A, 5, 25), Span(B, 0, 3)),
            category="Rent",
        ),
        BenchmarkQuery(query_id="q1", query="What law governs?", gold=(Span(A, 7, 9),), category=""),
    ]
    assert load_queries(str(path))[1].query_id == "q1"  # a str path works too


def test_load_queries_accepts_a_bare_list(tmp_path):
    path = write(tmp_path, [{"query": "q", "snippets": [{"file_path": A, "span": [0, 1]}]}])
    assert load_queries(path) == [BenchmarkQuery("q0", "q", (Span(A, 0, 1),))]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"queries": []}, KeyError),
        ({"tests": [{"snippets": [{"file_path": A, "span": [0, 1]}]}]}, KeyError),  # no query
        ({"tests": [{"query": "q", "snippets": [{"span": [0, 1]}]}]}, KeyError),  # no file
        ({"tests": [{"query": "q", "snippets": [{"file_path": A, "span": [9, 3]}]}]}, ValueError),
        ({"tests": [{"query": "q", "snippets": [{"file_path": A, "span": ["a", 3]}]}]}, ValueError),
        ({"tests": [{"query": "q", "snippets": [{"file_path": A, "span": [3]}]}]}, ValueError),
        ({"tests": [{"query": "q", "snippets": [{"file_path": A, "span": [1, 2, 3]}]}]}, ValueError),
        ({"tests": [{"query": "q", "snippets": [{"file_path": A, "span": 3}]}]}, TypeError),
        ({"tests": [{"query": "q", "snippets": []}]}, ValueError),  # no gold: nothing to score
        ({"tests": ["not an object"]}, TypeError),
        ({"tests": 3}, TypeError),
    ],
)
def test_load_queries_rejects_malformed_files(tmp_path, data, error):
    with pytest.raises(error):
        load_queries(write(tmp_path, data))


def test_load_queries_rejects_non_json(tmp_path):
    path = tmp_path / "queries.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError):
        load_queries(path)


@pytest.mark.skipif(not (DEV_DIR / "dev.json").is_file(), reason="LegalBench-RAG CUAD data not present")
def test_real_dev_set_spans_are_inside_their_files():
    queries = load_queries(DEV_DIR / "dev.json")
    assert len(queries) == 83
    assert len({q.query_id for q in queries}) == 83
    raw = {t["query_id"]: t for t in json.loads((DEV_DIR / "dev.json").read_text(encoding="utf-8"))["tests"]}
    texts: dict[str, str] = {}
    for query in queries:
        assert query.gold, query.query_id
        assert len({span.file_path for span in query.gold}) == 1  # one relevant contract per query
        for span, snippet in zip(query.gold, raw[query.query_id]["snippets"], strict=True):
            if span.file_path not in texts:
                texts[span.file_path] = (DEV_DIR / "corpus" / span.file_path).read_text(encoding="utf-8")
            text = texts[span.file_path]
            assert span.end <= len(text), (query.query_id, span)
            # Offsets are code points of the UTF-8 text: the span is exactly the recorded answer.
            assert text[span.start : span.end] == snippet["answer"], query.query_id
