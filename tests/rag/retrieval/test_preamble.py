"""A question naming its contract by the parties ("the Cano sponsorship with Boyd") is answered
from the clause it asks about, not from the preamble that names those parties: the naming words
route the question to the contract and are left out of what the cross-encoder reads, and the
parties paragraph is discounted."""

import pytest

from rag.retrieval.rerank import get_reranker
from rag.retrieval.service import Reader, retrieve
from tenants.models import Role
from tests.rag.sponsorships import CANO_GOVERNING_LAW, CANO_PREAMBLE, ingest_sponsorships

QUESTION = "Which state's law governs the Cano sponsorship with Boyd?"


@pytest.fixture
def contracts(case, ingest_text):
    return ingest_sponsorships(case, ingest_text)


def _retrieve(tenant, query, **options):
    return retrieve(tenant=tenant, query=query, reader=Reader(role=Role.OWNER), **options)


def _window(passage, document) -> str:
    assert passage.answer_start is not None and passage.answer_end is not None
    assert passage.char_start <= passage.answer_start < passage.answer_end <= passage.char_end
    return document.text[passage.answer_start : passage.answer_end]


@pytest.mark.django_db
def test_the_named_question_reads_without_the_names_that_routed_it(tenant, contracts):
    routing = _retrieve(tenant, QUESTION).routing
    assert [d.document_id for d in routing.documents] == [contracts["cano"].pk]
    assert {"cano", "boyd"} <= set(routing.naming)
    assert routing.question == QUESTION  # the question as asked is kept
    content = routing.content_question.lower()
    assert "cano" not in content and "boyd" not in content
    assert "governs" in content and "law" in content


@pytest.mark.django_db
def test_the_answer_window_is_the_governing_law_clause_not_the_preamble(tenant, contracts):
    cano = contracts["cano"]
    # Why this is not a given: read with the names, the model prefers the preamble (it names Cano
    # and Boyd and says "the laws of the State of ..." twice) to the clause that answers.
    preamble, clause = get_reranker().score(QUESTION, [CANO_PREAMBLE, CANO_GOVERNING_LAW])
    assert preamble > 0.5 > clause

    result = _retrieve(tenant, QUESTION)
    assert result.reranker == "ms-marco-MiniLM-L-12-v2"
    first = result.passages[0]
    assert first.document_id == cano.pk and first.routed
    window = _window(first, cano)
    assert CANO_GOVERNING_LAW in window and "Oklahoma" in window
    assert "by and between" not in window and "Delaware" not in window
    assert "Oklahoma" in first.snippet  # the snippet is cut around the answer window
    # Every other passage's best window scores under the clause's, the preamble's most of all.
    assert all(p.answer_score < first.answer_score for p in result.passages[1:])
    preamble_passages = [
        p for p in result.passages if p.document_id == cano.pk and "by and between" in p.text
    ]
    assert preamble_passages  # the preamble was read, and lost
    for passage in preamble_passages:
        assert passage.answer_score < 0.5 * first.answer_score


@pytest.mark.django_db
def test_without_a_reranker_there_is_no_answer_window(tenant, contracts, settings):
    settings.RAG_RERANKER_MODEL = ""
    result = _retrieve(tenant, QUESTION)
    assert result.reranker == "none"
    assert result.passages and result.passages[0].document_id == contracts["cano"].pk  # routing still works
    assert all(p.answer_score is None and p.answer_start is None for p in result.passages)
