"""The hallucination benchmark's answers and corruptions (bench/hallucination.py), on a hand-made
answer: no database, no model."""

import importlib.util
import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest

from rag.llm import Source
from rag.llm.extractive import answer as extractive_answer
from rag.pipeline.postprocess import process, resolve

_PATH = Path(__file__).resolve().parents[2] / "bench" / "hallucination.py"
_SPEC = importlib.util.spec_from_file_location("bench_hallucination", _PATH)
bench = sys.modules.setdefault(_SPEC.name, importlib.util.module_from_spec(_SPEC))
_SPEC.loader.exec_module(bench)

SOURCES = (
    Source(
        citation_id="1",
        document_id=3,
        title="Supply Agreement",
        page=1,
        text="This Agreement shall expire on December 31, 2030. The Supplier shall deliver the Products "
        "within 30 days of each purchase order.",
        similarity_score=0.8,
    ),
    Source(
        citation_id="2",
        document_id=3,
        title="Supply Agreement",
        page=2,
        text="This Agreement is governed by the laws of the State of Delaware.",
        similarity_score=0.6,
    ),
    Source(
        citation_id="3",
        document_id=4,
        title="License Agreement",
        page=1,
        text="The Licensee may use the Marks only in the Territory.",
        similarity_score=0.4,
    ),
)
CLAIMS = (
    bench.Claim(
        text="This Agreement shall expire on December 31, 2030.",
        token="1",
        title="Supply Agreement",
        snippet="This Agreement shall expire on December 31, 2030.",
        doc_id="3",
    ),
    bench.Claim(
        text="This Agreement is governed by the laws of the State of Delaware.",
        token="2",
        title="Supply Agreement",
        snippet="This Agreement is governed by the laws of the State of Delaware.",
        doc_id="3",
    ),
)
ANSWER = bench.Answer(
    query="When does the supply agreement expire?", sources=SOURCES, claims=CLAIMS, extra={}, rewrite_seed=5
)


def _copies(corruption, answer=ANSWER, seed=1):
    skips = bench.Skips(Counter())
    return corruption(answer, random.Random(seed), skips), skips.counts


def test_an_extractive_reply_round_trips():
    reply = extractive_answer("Which law governs the agreement?", SOURCES)
    answer = bench.from_extractive("Which law governs the agreement?", SOURCES, reply, seed=1)
    assert json.loads(bench.render(answer, "quoted"))["answer"] == reply["answer"]
    assert bench.from_extractive("q", SOURCES, {"answer": "I don't know.", "citations": []}, seed=1) is None


def test_the_rewritten_form_keeps_every_citation_and_drops_the_quotation_marks():
    text = bench.render(ANSWER, "rewritten")
    assert '"' not in text and "[1]" in text and "[2]" in text
    assert "this Agreement shall expire on December 31, 2030 [1]" in text
    assert text.count(".") == 1  # rewrite_seed 5: the two quotes joined into one sentence
    assert "2030 [1], and according to Supply Agreement, this Agreement is governed" in text


def test_invented_citations_name_no_source():
    copies, _ = _copies(bench.invented_citations)
    assert [copy.variant for copy in copies] == ["number past the sources", "doc id", "title, page"]
    for copy in copies:
        (changed,) = [claim for claim in copy.answer.claims if claim not in CLAIMS]
        assert resolve(changed.token, SOURCES) is None
        if changed.token.isdigit():
            assert int(changed.token) > len(SOURCES)


def test_an_invented_number_is_never_a_sources_document_id():
    # With 3 sources, numbers 4..8 are drawn; document 4 is one of the sources.
    for seed in range(20):
        copies, _ = _copies(bench.invented_citations, seed=seed)
        assert copies[0].variant == "number past the sources"
        tokens = {claim.token for claim in copies[0].answer.claims}
        assert "4" not in tokens


@pytest.mark.parametrize(
    ("alter", "text", "expected"),
    [
        (bench.alter_number, "Payment is due within 30 days.", {"31", "32", "35", "40"}),
        (bench.negate, "The Supplier shall deliver.", {"The Supplier shall not deliver."}),
        (bench.alter_word, "The exclusive license.", {"The non-exclusive license."}),
    ],
)
def test_alterations(alter, text, expected):
    altered = alter(text, random.Random(2))
    assert altered != text
    assert altered in expected or any(number in altered for number in expected)
    assert alter("a b c", random.Random(2)) is None


def test_altered_quotes_change_the_answer_the_snippet_or_both():
    copies, _ = _copies(bench.altered_quotes)
    assert {copy.variant.split(" in ")[0] for copy in copies} == {"number", "negation", "word"}
    for copy in copies:
        (changed,) = [claim for claim in copy.answer.claims if claim not in CLAIMS]
        original = next(claim for claim in CLAIMS if claim.token == changed.token)
        place = copy.variant.split(" in ")[1]
        assert (changed.text != original.text) == (place in ("answer", "both"))
        assert (changed.snippet != original.snippet) == (place in ("snippet", "both"))
        assert not bench.occurs(changed.snippet if place == "snippet" else changed.text, SOURCES[0].text)


def test_misattributed_sentences_go_to_the_lowest_ranked_other_passage_that_lacks_them():
    copies, skips = _copies(bench.misattributed)
    assert [claim.token for claim in copies[0].answer.claims] == ["3", "2"]
    assert copies[0].variant == "to a passage of another document"
    assert copies[0].answer.claims[0].title == "License Agreement"
    verbatim = (*SOURCES[:2], Source("3", 4, "Copy", 1, SOURCES[0].text + " " + SOURCES[1].text))
    copies, skips = _copies(bench.misattributed, bench.Answer("q", verbatim, CLAIMS, {}, 0))
    assert copies == [] and skips["misattributed: the sentence occurs in the other passage"] == 2


def test_unsupported_claims_skip_what_the_cited_source_supports():
    copies, _ = _copies(bench.unsupported_claims)
    assert len(copies) == bench.CLAIMS_PER_ANSWER
    for copy in copies:
        appended = copy.answer.claims[-1]
        assert not appended.quoted and appended.text in bench.FABRICATED_CLAIMS
        assert bench.overlap_share(appended.text, resolve(appended.token, SOURCES).text) < 0.5
    assert bench.overlap_share("The laws of Delaware govern this agreement.", SOURCES[1].text) >= 0.5


def test_corruption_is_deterministic_for_a_seed():
    first = bench.corrupt(ANSWER, seed=7, skips=bench.Skips(Counter()))
    assert first == bench.corrupt(ANSWER, seed=7, skips=bench.Skips(Counter()))
    assert {copy.type for copy in first} == set(bench.TYPES)


@pytest.mark.parametrize("form", bench.FORMS)
def test_the_checks_pass_the_intact_answer_and_flag_its_corrupted_quoted_copies(form):
    assert not bench.check(ANSWER, form).hallucination_detected
    if form == "quoted":
        for copy in bench.corrupt(ANSWER, seed=7, skips=bench.Skips(Counter())):
            assert bench.check(copy.answer, form).hallucination_detected, copy.variant
    processed = process(bench.render(ANSWER, form), SOURCES, follow_up_count=2)
    assert [c.source.citation_id for c in processed.citations] == ["1", "2"]
