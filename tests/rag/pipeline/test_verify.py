"""The hallucination checks: invented citations, altered quotes, unsupported cited sentences,
uncited answers; and no false alarm on faithful answers (extractive and paraphrased)."""

import json

import pytest

from rag.llm import GenerationRequest, Source
from rag.llm.extractive import ExtractiveProvider
from rag.pipeline.postprocess import process
from rag.pipeline.verify import cited_sentences, support, verify

SOURCES = [
    Source(
        citation_id="1",
        document_id=42,
        title="Lease",
        page=3,
        text="The Tenant shall pay rent of $4,000 monthly in advance.\nLate payments accrue 5% interest.",
    ),
    Source(
        citation_id="2",
        document_id=43,
        title="Supply contract",
        page=1,
        text="This Agreement is governed by the laws of the State of Delaware.",
    ),
]


def _checked(answer: str, citations=(), **extra):
    reply = {"answer": answer, "citations": list(citations), "follow_ups": [], "confidence": 0.8, **extra}
    processed = process(json.dumps(reply), SOURCES, follow_up_count=2)
    return verify(processed, SOURCES)


def test_a_faithful_paraphrase_with_citations_passes():
    result = _checked(
        "The tenant pays $4,000 rent monthly in advance [1]. Delaware law governs the supply agreement [2].",
        [{"id": "1", "snippet": "The Tenant shall pay rent of $4,000   monthly in advance."}],
    )
    assert not result.hallucination_detected and not result.needs_verification


def test_an_invented_citation_is_detected():
    result = _checked("Rent is $4,000 monthly [1]; the lease is perpetual [7].")
    assert result.invalid_citations == ["7"] and result.hallucination_detected


def test_an_altered_quote_is_detected():
    result = _checked(
        'The lease says: "The Tenant shall pay rent of $5,000 monthly in advance." [1]',
        [{"id": "1", "snippet": "The Tenant shall pay rent of $5,000 monthly in advance."}],
    )
    assert result.misquoted == ["1"] and result.hallucination_detected


def test_a_sentence_its_source_does_not_support_is_detected():
    result = _checked("The landlord may evict the tenant without notice after one missed payment [2].")
    assert result.unsupported and result.hallucination_detected
    assert support("Delaware law governs this agreement [2].", [SOURCES[1].text]) == 1.0


def test_a_substantive_answer_without_citations_needs_verification():
    result = _checked("Rent is four thousand dollars every month and late payments accrue interest.")
    assert not result.hallucination_detected and result.needs_verification
    assert not _checked("I don't know.").needs_verification


def test_markers_after_a_sentence_end_belong_to_that_sentence():
    sentences = cited_sentences('Lease states: "Rent is due." [1] Contract states: "Delaware law." [2] [1]')
    assert sentences == [
        ('Lease states: "Rent is due."', ["1"]),
        ('Contract states: "Delaware law."', ["2", "1"]),
    ]


@pytest.mark.parametrize(
    "question", ["How much is the rent?", "Which law governs?", "What about late payments?"]
)
def test_extractive_answers_pass_their_own_check(question):
    request = GenerationRequest(system="", prompt="", question=question, sources=tuple(SOURCES))
    processed = process(ExtractiveProvider().generate(request).text, SOURCES, follow_up_count=2)
    assert processed.answer and processed.citations
    assert not verify(processed, SOURCES).needs_verification
