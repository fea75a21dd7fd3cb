"""The extractive provider's list over a matter (rag.review): counts, one quote per document, and
a pointer to the review table when too many qualify to read as a list."""

from rag.llm.base import Listing, Source
from rag.llm.extractive import listing_reply


def _source(number: int) -> Source:
    clause = f"Contractor {number} shall not compete with the Company in the Territory."
    return Source(
        citation_id=str(number), document_id=100 + number, title=f"Agreement {number}", page=1, text=clause,
        answer_score=0.9, focus=clause,
    )  # fmt: skip


def test_each_document_is_quoted_with_its_citation_under_the_count():
    reply = listing_reply(
        Listing(noun="a non-compete clause", checked=25, confidences=(0.8, 0.6)), [_source(1), _source(2)]
    )
    lines = reply["answer"].split("\n")
    assert lines[0] == "2 of the 25 documents checked hold a non-compete clause:"
    assert (
        lines[1] == '- Agreement 1: "Contractor 1 shall not compete with the Company in the Territory." [1]'
    )
    assert [c["id"] for c in reply["citations"]] == ["1", "2"]
    assert reply["confidence"] == 0.7


def test_too_many_to_read_points_to_the_review_table():
    listing = Listing(noun="a non-compete clause", checked=400, more=70, confidences=(0.9,))
    reply = listing_reply(listing, [_source(1)])
    lines = reply["answer"].split("\n")
    assert lines[0] == "71 of the 400 documents checked hold a non-compete clause; the 1 likeliest:"
    assert "The other 70 are too many to read here: the case's Review page lists every one" in lines[-1]


def test_a_key_term_states_the_value_the_first_of_its_questions_finds_in_its_quote():
    law = "This Agreement shall be governed by the laws of the State of Delaware."
    merged = Source(
        citation_id="1", document_id=7, title="Alpha Agreement", page=1, text=law, answer_score=0.9, focus=law
    )
    listing = Listing(
        noun="",
        checked=1,
        labels=("Effective Date / Governing Law",),
        # One sentence stating two terms: the effective date's question finds nothing, the law's does.
        questions=(
            (
                "What is the effective date of this agreement?",
                "Which state or country's law governs this agreement?",
            ),
        ),
        confidences=(0.9,),
    )
    reply = listing_reply(listing, [merged])
    assert (
        reply["answer"].splitlines()[1]
        == f'- Effective Date / Governing Law: The laws of Delaware govern [1]. "{law}" [1]'
    )
    clause_type = Listing(noun="", checked=1, labels=("Governing Law",), questions=((),), confidences=(0.9,))
    assert listing_reply(clause_type, [merged])["answer"].splitlines()[1] == f'- Governing Law: "{law}" [1]'
