"""What a list answer says of the documents in scope it could not check: those not indexed yet
by name and state, confidential ones the reader may not read only as a count."""

from __future__ import annotations

from rag.pipeline.review_prompt import review_block
from rag.review.classify import Review, Verdict
from rag.review.columns import BY_KEY
from rag.review.unchecked import MAX_NAMED, Pending, Unchecked


def test_nothing_unchecked_says_nothing():
    assert Unchecked().sentence() == ""
    assert not Unchecked()


def test_documents_not_indexed_are_named_with_their_state_and_confidential_ones_counted():
    unchecked = Unchecked(
        (Pending(1, 'The "Alpha" Lease', "failed"), Pending(2, "Beta NDA", "queued")), withheld=2
    )
    assert unchecked.sentence() == (
        "2 more in scope could not be checked: The Alpha Lease (could not be indexed) and "
        "Beta NDA (waiting to be indexed). "
        "2 more are confidential and not open to you: they were not checked."
    )
    assert len(unchecked) == 4


def test_past_ten_documents_the_rest_are_counted():
    pending = tuple(Pending(i, f"Exhibit {i}", "processing") for i in range(MAX_NAMED + 5))
    sentence = Unchecked(pending).sentence()
    opening = f"{MAX_NAMED + 5} more in scope could not be checked: Exhibit 0 (still being indexed),"
    assert sentence.startswith(opening)
    assert sentence.endswith("and 5 more not indexed yet.")
    assert "Exhibit 10" not in sentence


def test_a_remote_model_is_told_to_say_which_documents_were_not_checked():
    column = BY_KEY["non_compete"]
    review = Review(
        column,
        [Verdict(1, True, 0.9), Verdict(2, False, 0.05)],
        Unchecked((Pending(3, "Gamma Draft", "processing"),), withheld=1),
        "clause-model",
    )
    note = review_block(review, listed=1)
    assert (
        "in these words: 1 more in scope could not be checked: Gamma Draft (still being indexed). "
        "1 more is confidential and not open to you: it was not checked." in note
    )
