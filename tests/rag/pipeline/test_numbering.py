"""Citation numbers run 1, 2, 3 in the order the reader meets them, whatever the context's order
or the model's ids."""

from rag.pipeline.numbering import numbers, renumbered


def test_markers_are_numbered_by_first_appearance_then_the_rest_of_the_context():
    answer = (
        '10 February 2012 [6]. The agreement states: "EFFECTIVE DATE: February 10, 2012" [6]; and "…" [1].'
    )
    tokens = {str(n): str(n) for n in range(1, 8)}
    shown = numbers(answer, tokens, cited=["6", "1"], context=[str(n) for n in range(1, 8)])
    assert shown["6"] == "1" and shown["1"] == "2" and shown["2"] == "3" and shown["7"] == "7"
    assert renumbered(answer, tokens, shown) == (
        '10 February 2012 [1]. The agreement states: "EFFECTIVE DATE: February 10, 2012" [1]; and "…" [2].'
    )


def test_document_ids_and_names_become_numbers_and_other_brackets_stay():
    answer = "The fee is [***] [doc_42]. Both allow it [doc_7, doc_42]. See [Lease, page 3] [sic]."
    tokens = {"doc_42": "doc_42", "doc_7": "doc_7", "Lease, page 3": "doc_9_2"}
    shown = numbers(
        answer, tokens, cited=["doc_42", "doc_7", "doc_9_2"], context=["doc_7", "doc_42", "doc_9_2"]
    )
    assert shown == {"doc_42": "1", "doc_7": "2", "doc_9_2": "3"}
    assert renumbered(answer, tokens, shown) == "The fee is [***] [1]. Both allow it [2][1]. See [3] [sic]."


def test_a_citation_without_a_marker_follows_those_with_one():
    shown = numbers("Yes [2].", {"2": "2", "5": "5"}, cited=["5", "2"], context=["2", "5"])
    assert shown == {"2": "1", "5": "2"}
