"""The offline extractive provider: verbatim quotes with the right citation tokens, follow-ups,
confidence, "I don't know", redacted passages, determinism."""

import json

import pytest

from rag.llm import GenerationRequest, Source, get_provider
from rag.llm.extractive import I_DONT_KNOW, ExtractiveProvider, _quoted, answer

LEASE = Source(
    citation_id="1",
    document_id=11,
    title="Initech lease",
    page=3,
    text=(
        "4. Rent. Tenant shall pay rent monthly in advance. "
        "9. Termination. Landlord may terminate this Lease on thirty (30) days notice if rent is unpaid. "
        "14. Governing Law. This Lease is governed by the laws of the State of New York."
    ),
    similarity_score=0.8,
)
MSA = Source(
    citation_id="2",
    document_id=12,
    title="Acme MSA",
    page=1,
    text="12. Governing Law. This Agreement shall be governed by the laws of the State of Delaware.",
    similarity_score=0.6,
)


def _normalized(text: str) -> str:
    return " ".join(text.split())


def test_the_answer_quotes_the_best_sentences_with_their_citation_tokens():
    reply = answer("What is the governing law?", [LEASE, MSA])
    assert [c["id"] for c in reply["citations"]] == ["1", "2"]
    assert reply["citations"][0]["doc_id"] == "11"
    for citation, source in zip(reply["citations"], [LEASE, MSA], strict=True):
        assert citation["snippet"] in _normalized(source.text)  # verbatim
        assert "governed by the laws" in citation["snippet"]
        assert f'"{citation["snippet"]}" [{citation["id"]}]' in reply["answer"]
    assert "rent monthly" not in reply["answer"]
    assert 0 < reply["confidence"] <= 1 and reply["disclaimer"]


def test_one_quote_per_passage():
    reply = answer("Can the landlord terminate the lease if rent is unpaid?", [LEASE])
    assert len(reply["citations"]) == 1
    assert reply["citations"][0]["snippet"].startswith("Landlord may terminate this Lease")


def test_a_sentence_two_overlapping_passages_share_is_quoted_once():
    overlap = Source(
        citation_id="9",
        document_id=LEASE.document_id,  # the next chunk of the same lease, overlapping the first
        title=LEASE.title,
        page=3,
        text="Landlord may terminate this Lease on thirty (30) days notice if rent is unpaid. "
        "15. Notices. Notices are given in writing.",
        similarity_score=0.7,
    )
    reply = answer("Can the landlord terminate the lease if rent is unpaid?", [LEASE, overlap])
    snippets = [c["snippet"] for c in reply["citations"]]
    assert snippets == ["Landlord may terminate this Lease on thirty (30) days notice if rent is unpaid."]
    assert reply["answer"].count("Landlord may terminate") == 1


def test_a_clause_named_in_the_question_is_found_in_its_usual_wording():
    contract = Source(
        citation_id="1",
        document_id=1,
        title="Supply contract",
        page=1,
        text="Each clause of this contract is severable. Neither party may transfer this Agreement "
        "without the prior written consent of the other party.",
        similarity_score=0.5,
    )
    reply = answer("Is there an anti-assignment clause in this contract?", [contract])
    assert reply["citations"][0]["snippet"].startswith("Neither party may transfer")


def test_nothing_in_common_is_i_dont_know():
    reply = answer("Who won the football match?", [LEASE, MSA])
    assert reply["answer"] == I_DONT_KNOW and reply["confidence"] == 0.0
    assert reply["citations"] == [] and reply["follow_ups"] == []


@pytest.mark.parametrize("count", [0, 1, 2, 4])
def test_exactly_the_requested_number_of_follow_ups(count):
    follow_ups = answer("What is the governing law?", [LEASE, MSA], follow_up_count=count)["follow_ups"]
    assert len(follow_ups) == count == len(set(follow_ups))
    assert all(question.endswith("?") for question in follow_ups)


def test_the_provider_returns_the_reply_as_json_deterministically():
    provider = get_provider("extractive")
    assert isinstance(provider, ExtractiveProvider)
    request = GenerationRequest(
        system="You are a legal assistant.",
        prompt="Context: ...\n\nQuestion: What is the governing law?",
        question="What is the governing law?",
        sources=(LEASE, MSA),
        follow_up_count=2,
    )
    first, second = provider.generate(request), provider.generate(request)
    assert first.text == second.text
    assert json.loads(first.text) == answer("What is the governing law?", [LEASE, MSA])
    assert (first.provider, first.model, first.cost_estimate) == ("extractive", "extractive-v1", 0.0)
    assert first.input_tokens > 0 and first.output_tokens > 0
    assert first.tokens_used == first.input_tokens + first.output_tokens


def test_unknown_provider_is_a_configuration_error(settings):
    from ragsite.exceptions import ConfigurationError

    settings.RAG_LLM_PROVIDER = "gpt-99"
    with pytest.raises(ConfigurationError) as caught:
        get_provider()
    assert caught.value.status_code == 503 and "RAG_LLM_PROVIDER" in caught.value.details


def test_the_date_is_stated_from_a_preamble_passage_that_is_no_answer_window():
    # Agentic evidence: the preamble comes as a plain passage (no window scored), the clause as one.
    preamble = Source(
        citation_id="doc_7_2",
        document_id=7,
        title="Alfa Supply",
        page=1,
        chunk_number=1,
        text="SUPPLY AGREEMENT\n\nThis Supply Agreement is made as of the 31st day of October, 2019 by Alfa.",
    )
    clause = Source(
        citation_id="doc_7",
        document_id=7,
        title="Alfa Supply",
        page=4,
        chunk_number=9,
        text="No amendment is valid unless signed by both parties.",
        answer_score=0.07,
        focus="No amendment is valid unless signed by both parties.",
    )
    reply = answer("When was this agreement signed?", [clause, preamble])
    assert reply["answer"].startswith("31 October 2019 [doc_7_2].")
    assert reply["citations"][0]["id"] == "doc_7_2"


def test_a_sentence_the_contract_quotes_whole_is_quoted_once():
    # An amendment restating a clause in quotation marks: '""TERM: …""' would read as empty quotes.
    amendment = Source(
        citation_id="1",
        document_id=3,
        title="Glu Amendment No. 3",
        page=1,
        text='Section 7 is replaced. "TERM: The Term of this Agreement shall end on March 31, 2008." '
        "All other terms remain in effect.",
    )
    reply = answer("When does the term of the agreement end?", [amendment])
    assert '"TERM: The Term of this Agreement shall end on March 31, 2008." [1]' in reply["answer"]
    assert '""' not in reply["answer"]
    assert reply["citations"][0]["snippet"] in amendment.text


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ('"TERM: The Term ends in 2008."', '"TERM: The Term ends in 2008." [2]'),
        ('"The "Term" ends in 2008."', '"The "Term" ends in 2008." [2]'),  # a quote within, kept
        ('"Product" means the "Goods"', '""Product" means the "Goods"" [2]'),  # two quotes, not one
        ("Plain text.", '"Plain text." [2]'),
    ],
)
def test_only_a_wholly_quoted_text_loses_its_own_marks(text, quoted):
    assert _quoted(text, "2") == quoted
