"""Citation numbers run 1, 2, 3 in the order the reader meets them, whatever the context's order
or the model's ids."""

from rag.pipeline.numbering import StreamedNumbers, numbers, renumbered


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


def test_a_streamed_answer_is_numbered_as_its_markers_close_and_ends_as_the_result():
    ids = {"6": "6", "1": "1", "doc_42": "doc_42"}
    streamed = StreamedNumbers(ids.get)
    chunks = ["10 February 2012 [", "6]. The fee is [***", "] and [doc_", "42, 1]; also [6", "]"]
    text = "".join(streamed.feed(chunk) for chunk in chunks) + streamed.flush()
    whole = "".join(chunks)
    assert text == renumbered(whole, ids, numbers(whole, ids, cited=[], context=["1", "6", "doc_42"]))
    assert text == "10 February 2012 [1]. The fee is [***] and [2][3]; also [1]"
    # Nothing is shown from an open "[" until it closes; a bracket never closed is shown at the end.
    held = StreamedNumbers(ids.get)
    assert held.feed("Yes [") == "Yes " and held.flush() == "["
