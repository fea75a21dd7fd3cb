"""The extractive provider quotes a clause review's evidence (GenerationRequest.evidence) after its
own quotes: "Also on point: …", never repeating a quote, never leading, and alone when search found
nothing to quote; a terse answer keeps its one quote."""

from rag.llm.base import Source
from rag.llm.extractive import answer

QUESTION = "Does this agreement contain a non-compete?"
DEFINITION = '"Competing Product" means any product that competes with the Products in the Territory.'
CLAUSE = "Distributor shall not sell any Competing Product in the Territory during the Term."
AFTER = "For one (1) year after termination, Distributor shall not sell any Competing Product."


def source(citation_id, focus, score, *, document_id=1):
    return Source(
        citation_id=citation_id,
        document_id=document_id,
        title="Alpha Distribution Agreement",
        page=1,
        text=f"Words before. {focus} Words after.",
        answer_score=score,
        focus=focus,
    )


def test_the_evidence_is_quoted_after_the_answers_own_quote_and_never_leads():
    # The evidence windows carry no answer score (0.0): without `evidence` they would not be quoted.
    sources = [source("1", DEFINITION, 0.9), source("2", CLAUSE, 0.0), source("3", AFTER, 0.0)]
    plain = answer(QUESTION, sources)
    assert [c["id"] for c in plain["citations"]] == ["1"]
    reply = answer(QUESTION, sources, evidence=("2", "3"))
    assert [c["id"] for c in reply["citations"]] == ["1", "2", "3"]
    assert reply["answer"].startswith(plain["answer"].rstrip())
    assert reply["answer"].endswith(f'Also on point: "{CLAUSE}" [2]; and "{AFTER}" [3].')
    assert reply["citations"][1] == {"id": "2", "doc_id": "1", "snippet": CLAUSE}


def test_evidence_that_repeats_a_quote_is_not_quoted_again():
    sources = [source("1", CLAUSE, 0.9), source("2", CLAUSE, 0.0)]
    reply = answer(QUESTION, sources, evidence=("2",))
    assert [c["id"] for c in reply["citations"]] == ["1"]
    assert "Also on point" not in reply["answer"]


def test_evidence_that_is_only_a_heading_is_not_quoted():
    sources = [source("1", DEFINITION, 0.9), source("2", "LIABILITY", 0.0), source("3", CLAUSE, 0.0)]
    reply = answer(QUESTION, sources, evidence=("2", "3"))
    assert [c["id"] for c in reply["citations"]] == ["1", "3"]


def test_with_nothing_else_to_quote_the_evidence_is_the_answer():
    reply = answer(QUESTION, [source("1", CLAUSE, 0.0)], evidence=("1",))
    assert reply["answer"] == f'Alpha Distribution Agreement states: "{CLAUSE}" [1]'
    assert [c["snippet"] for c in reply["citations"]] == [CLAUSE]


def test_a_terse_answer_keeps_its_one_quote():
    sources = [source("1", DEFINITION, 0.9), source("2", CLAUSE, 0.0)]
    reply = answer(QUESTION, sources, evidence=("2",), response_style="terse")
    assert [c["id"] for c in reply["citations"]] == ["1"]
