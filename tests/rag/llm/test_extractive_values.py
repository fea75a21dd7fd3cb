"""The offline provider states the value first and quotes the sentence that holds it (issue #35):
a lead window beside the value is widened to it, never cut short of it."""

from rag.llm.base import Source
from rag.llm.extractive import answer

FEE = "The Customer shall pay the recurring monthly fee in the amount of $450."
DUE = "The Customer shall pay the recurring monthly fees by the 5th day of each month."


def test_the_value_is_stated_and_the_quote_holds_it():
    text = f"Hosting terms. {FEE} {DUE}"
    source = Source(
        citation_id="1",
        document_id=3,
        title="Hosting Agreement",
        page=1,
        text=text,
        answer_score=0.8,
        focus=DUE,
    )
    reply = answer("What is the monthly fee?", [source])
    assert reply["answer"].startswith(f'$450 [1]. Hosting Agreement states: "{FEE} {DUE}" [1]')
    assert "$450" in reply["citations"][0]["snippet"]


def test_no_value_is_stated_that_the_passage_does_not_give():
    source = Source(
        citation_id="1",
        document_id=3,
        title="Hosting Agreement",
        page=1,
        text=DUE,
        answer_score=0.8,
        focus=DUE,
    )
    reply = answer("What is the monthly fee?", [source])
    assert reply["answer"].startswith("Hosting Agreement states:")
