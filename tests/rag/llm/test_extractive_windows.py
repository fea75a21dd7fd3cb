"""The extractive provider on reranked sources (each with its best answer window, `focus`, and that
window's `answer_score`): the first passage's window leads, only its document is quoted (each
candidate's, grouped by document, when the question is ambiguous), headings are not quoted, a
sentence two overlapping chunks carry is quoted once, and the confidence rewards a clear winner."""

import pytest

from rag.llm.base import Source
from rag.llm.extractive import MAX_QUOTES, MAX_SENTENCE_CHARS, answer, operative_text, window_confidence

LAW = "This Agreement shall be governed by the laws of the State of Texas."
ASSIGNMENT = "Neither party may assign this Agreement without the prior written consent of the other party."
FEES = "The Sponsor shall pay a fee of $250,000 per season."
QUESTION = "What law governs the agreement?"


def source(
    citation_id, document_id, focus, score, *, title="Cano Boyd Sponsorship", text=None, similarity=0.5
):
    return Source(
        citation_id=citation_id,
        document_id=document_id,
        title=title,
        page=1,
        text=text if text is not None else f"Some words before. {focus} Some words after.",
        similarity_score=similarity,
        answer_score=score,
        focus=focus,
    )


def test_the_first_documents_best_window_leads_and_weak_windows_are_not_quoted():
    # The ranking put the governing-law passage first (its window's score weighed with how well its
    # document is the one the question names); the provider does not second-guess it.
    sources = [
        source("1", 1, FEES, 0.08, similarity=0.9),
        source("3", 1, LAW, 0.97, similarity=0.2),
        source("2", 1, ASSIGNMENT, 0.25),
    ]
    reply = answer(QUESTION, sources)
    assert reply["citations"][0] == {"id": "3", "doc_id": "1", "snippet": LAW}
    # The value asked for first (rag.answers), then the quote it comes from.
    assert reply["answer"].startswith(
        f'The laws of Texas govern [3]. Cano Boyd Sponsorship states: "{LAW}" [3]'
    )
    # The others score under RELATIVE_WINDOW_SCORE of the lead (and MIN_WINDOW_SCORE): not quoted.
    assert [c["id"] for c in reply["citations"]] == ["3"]
    assert FEES not in reply["answer"] and ASSIGNMENT not in reply["answer"]


def test_a_better_scoring_window_of_another_contract_never_leads_nor_follows():
    # A question naming the Cano contract: its fee window ranks first though another contract's
    # insurance window scores higher against the question without the names.
    insurance = "Lonestar shall carry liability insurance of at least five million dollars."
    sources = [
        source("1", 7, FEES, 0.05),
        source("2", 8, insurance, 0.8, title="Apache Lonestar Sponsorship"),
    ]
    reply = answer("How much must Cano pay Boyd under the sponsorship?", sources)
    assert [c["id"] for c in reply["citations"]] == ["1"]
    assert "Apache" not in reply["answer"] and insurance not in reply["answer"]


def test_windows_close_to_the_lead_follow_it_in_score_order():
    sources = [
        source("2", 1, ASSIGNMENT, 0.95),
        source("1", 1, FEES, 0.85),
        source("3", 1, LAW, 0.90),
        source("4", 1, "Notices shall be in writing and sent by certified mail.", 0.88),
    ]
    reply = answer(QUESTION, sources)
    assert [c["id"] for c in reply["citations"]] == ["2", "3", "4"]  # at most MAX_QUOTES
    assert len(reply["citations"]) == MAX_QUOTES


@pytest.mark.parametrize(
    "heading",
    [
        "13. Governing Law. ",
        "13. GOVERNING LAW. ",
        "(b) Governing Law. ",
        "ARTICLE IX. ",
        "13.\tGoverning Law.\n",
    ],
)
def test_a_heading_leading_the_window_is_not_quoted(heading):
    focus = heading + LAW
    reply = answer(QUESTION, [source("1", 1, focus, 0.97), source("2", 1, ASSIGNMENT, 0.2)])
    assert reply["citations"][0]["snippet"] == LAW
    assert reply["answer"] == f'The laws of Texas govern [1]. Cano Boyd Sponsorship states: "{LAW}" [1]'
    assert heading.strip() not in reply["answer"]


@pytest.mark.parametrize(
    "heading",
    [
        pytest.param("13. GOVERNING LAW\n\n"),
        pytest.param("Section 13.2 Governing Law. "),
        pytest.param("Governing Law\n"),
        pytest.param("Governing Law "),
    ],
)
def test_a_heading_in_other_common_forms_is_not_quoted(heading):
    reply = answer(QUESTION, [source("1", 1, heading + LAW, 0.97)])
    assert reply["citations"][0]["snippet"] == LAW


def test_a_clause_opening_with_capitalised_words_keeps_them():
    assert operative_text("Each Party shall keep the terms confidential.").startswith("Each Party shall")
    clause = "The term of this Agreement is one year."
    assert operative_text(f"Term {clause}") == clause


GOVERNING = (
    "This Agreement and any amendments thereto shall be construed according to the laws of the State of\n"
    "Colorado without regard to conflicts of law principles."
)


def test_table_rows_address_lines_and_headings_before_a_clause_are_not_quoted():
    # A PDF's notice table and headings run into the clause with single line breaks.
    window = (
        "Party    Address    Attention\n"
        "Shi Farms    214 39th Lane, Pueblo, CO 81006    Steven Turetsky\n"
        "Gridiron    1119 West 1st Ave - Suite G, Spokane, WA 99021    Tim Orr\n"
        "5. ENTIRE AGREEMENT\n"
        "B. Governing Law\n" + GOVERNING
    )
    assert operative_text(window) == " ".join(GOVERNING.split())


def test_a_wrapped_clause_line_ending_before_a_capitalised_word_is_kept():
    # "...the State of" / "Colorado ...": the line ends in a lower-case word, so the clause goes on.
    assert operative_text(GOVERNING) == " ".join(GOVERNING.split())


def test_a_short_operative_sentence_in_capitals_is_quoted():
    focus = (
        '11. WARRANTY. THE SERVICES ARE PROVIDED "AS IS." SUPPLIER DISCLAIMS ALL OTHER WARRANTIES, '
        "EXPRESS OR IMPLIED, INCLUDING MERCHANTABILITY."
    )
    assert operative_text(focus).startswith('THE SERVICES ARE PROVIDED "AS IS."')


def test_a_sentence_two_overlapping_chunks_carry_is_quoted_once():
    chunk_a = source("1", 7, "13. Governing Law. " + LAW, 0.97, text=f"{FEES}\n\n13. Governing Law. {LAW}")
    chunk_b = source("2", 7, LAW, 0.96, text=f"{LAW}\n\n14. Assignment. {ASSIGNMENT}")  # the next chunk
    reply = answer(QUESTION, [chunk_a, chunk_b])
    assert reply["answer"].count(LAW) == 1
    assert [c["id"] for c in reply["citations"]] == ["1"]


def test_an_ambiguous_question_answers_each_document_with_its_value_then_its_quote():
    lonestar_law = "This Agreement shall be governed by the laws of the State of Kansas."
    sources = [
        source("1", 8, lonestar_law, 0.93, title="Apache Lonestar Sponsorship"),
        source("2", 7, LAW, 0.97),
        source("3", 7, ASSIGNMENT, 0.90),
        source("4", 9, "The Distributor shall be governed by Ohio law.", 0.99, title="Another contract"),
    ]
    reply = answer(QUESTION, sources, each_document=(7, 8))
    assert [c["id"] for c in reply["citations"]] == ["1", "2"]  # each one's best, in context order
    assert reply["answer"] == (
        f'Apache Lonestar Sponsorship \u2014 The laws of Kansas govern [1]. "{lonestar_law}" [1] '
        f'Cano Boyd Sponsorship \u2014 The laws of Texas govern [2]. "{LAW}" [2]'
    )
    # A question asking for no value: each document named, then its quote.
    plain = answer("What does the sponsorship agreement say about disputes?", sources, each_document=(7, 8))
    assert plain["answer"].startswith(f'Apache Lonestar Sponsorship states: "{lonestar_law}" [1]')
    # Without the ambiguity, only the first passage's document is quoted.
    assert [c["id"] for c in answer(QUESTION, sources)["citations"]] == ["1"]


def test_an_ambiguous_question_quotes_each_documents_best_window_not_its_first_passage():
    """Each document is answered with the window it would lead with if asked alone: its best-scoring
    one, wherever its passage comes in the context."""
    lonestar_law = "This Agreement shall be governed by the laws of the State of Kansas."
    sources = [
        source("1", 7, ASSIGNMENT, 0.90),
        source("2", 8, "Lonestar shall display the Apache name.", 0.60, title="Apache Lonestar Sponsorship"),
        source("3", 7, LAW, 0.97),
        source("4", 8, lonestar_law, 0.93, title="Apache Lonestar Sponsorship"),
    ]
    reply = answer(QUESTION, sources, each_document=(7, 8))
    assert [c["id"] for c in reply["citations"]] == ["3", "4"]
    assert LAW in reply["answer"] and lonestar_law in reply["answer"] and ASSIGNMENT not in reply["answer"]


def test_the_reply_confidence_is_the_window_confidence():
    lead, other = source("1", 1, LAW, 0.97), source("2", 1, ASSIGNMENT, 0.3)
    assert answer(QUESTION, [lead, other])["confidence"] == window_confidence(lead, [other])


def test_a_clear_winner_is_more_confident_than_two_near_equal_windows():
    lead = source("1", 1, LAW, 0.95)
    clear = window_confidence(lead, [source("2", 1, ASSIGNMENT, 0.05)])
    elsewhere_in_the_document = window_confidence(lead, [source("2", 1, ASSIGNMENT, 0.93)])
    another_document = window_confidence(lead, [source("2", 2, LAW.replace("Texas", "Ohio"), 0.93)])
    assert clear > 2 * elsewhere_in_the_document
    assert clear > 2 * another_document
    for value in (clear, elsewhere_in_the_document, another_document):
        assert 0.0 <= value <= 1.0


def test_the_same_window_in_an_overlapping_chunk_is_no_rival():
    lead = source("1", 1, "13. Governing Law. " + LAW, 0.95)
    alone = window_confidence(lead, [])
    assert window_confidence(lead, [source("2", 1, LAW, 0.94)]) == alone
    assert window_confidence(lead, [source("2", 2, LAW, 0.94)]) < alone  # another document's is


def test_a_stronger_lead_is_more_confident_and_confidence_stays_in_0_1():
    rival = source("2", 2, ASSIGNMENT, 0.2)
    values = [window_confidence(source("1", 1, LAW, score), [rival]) for score in (0.3, 0.6, 0.9, 0.99)]
    assert values == sorted(values) and len(set(values)) == len(values)
    extremes = [
        window_confidence(source("1", 1, LAW, 1.0), []),
        window_confidence(source("1", 1, LAW, 0.0), [source("2", 2, ASSIGNMENT, 1.0)]),
        window_confidence(source("1", 1, LAW, 0.0), []),
    ]
    assert all(0.0 <= value <= 1.0 for value in extremes)
    assert extremes[0] > 0.9 and extremes[1] < 0.05


def test_without_windows_a_heading_sentence_is_never_quoted_for_its_words():
    # A sub-question answered from its passages' sentences: "Orders" and "Delivery" are the
    # question's words, but the heading only names the clause that follows it.
    text = (
        "6. Orders; Delivery.\n\n"
        "FCC shall accept all purchase orders unless the amount ordered exceeds the Maximum Quantity."
    )
    reply = answer("When can FCC refuse orders for delivery?", [source("1", 1, "", None, text=text)])
    snippets = [citation["snippet"] for citation in reply["citations"]]
    assert snippets and all("Orders; Delivery" not in snippet for snippet in snippets)
    assert snippets[0].startswith("FCC shall accept all purchase orders")


def test_without_windows_a_title_in_capitals_is_never_quoted():
    text = "GAS FRANCHISE AGREEMENT\n\nThe term of the Franchise shall be twenty (20) years."
    reply = answer("How long does the gas franchise run?", [source("1", 1, "", None, text=text)])
    assert [c["snippet"] for c in reply["citations"]] == [
        "The term of the Franchise shall be twenty (20) years."
    ]


def test_a_quote_cut_short_says_so():
    # A run-on clause longer than MAX_SENTENCE_CHARS is quoted up to a word end, marked as cut: a
    # reader must not take the quote for the whole clause.
    clause = (
        "The Company shall indemnify the Sponsor against "
        + ", ".join(f"claim number {n} of the kind described in Schedule {n}" for n in range(1, 30))
        + "."
    )
    reply = answer("What must the company indemnify?", [source("1", 1, clause, 0.9)])
    snippet = reply["citations"][0]["snippet"]
    assert snippet.endswith(" \u2026") and len(snippet) <= MAX_SENTENCE_CHARS + 2
    assert clause.startswith(snippet.removesuffix(" \u2026"))
    assert f'"{snippet}" [1]' in reply["answer"]


TERM = (
    'Section 8.1 Term. The term of this Agreement shall continue until June 27, 2011 (the "Term"). '
    "The Term shall be extended for subsequent one year periods upon the mutual agreement of the parties."
)
EARLY = "Section 8.2 Early Termination. Either party may terminate on ninety (90) days notice."


def test_the_rest_of_a_short_clause_is_quoted_after_its_window():
    # The window is the clause's first sentence; the one after it says whether the term renews.
    text = f"ARTICLE VIII\n\n{TERM}\n\n{EARLY}"
    window = TERM[: TERM.index(" The Term shall")]
    reply = answer("Can the agreement be renewed after 2011?", [source("1", 1, window, 0.97, text=text)])
    quoted = reply["citations"][0]["snippet"]
    assert quoted == TERM.removeprefix("Section 8.1 Term. ")
    assert EARLY.split(". ", 1)[1] not in reply["answer"]  # the next paragraph is another clause
    terse = answer("Can it be renewed?", [source("1", 1, window, 0.97, text=text)], response_style="terse")
    assert terse["citations"][0]["snippet"] == window.removeprefix("Section 8.1 Term. ")


@pytest.mark.parametrize(
    "text",
    [
        # No blank line ends the paragraph in the passage: where the clause ends is unknown.
        f"ARTICLE VIII\n\n{TERM} {EARLY}",
        # A long paragraph: the window alone, not a wall of text.
        f"ARTICLE VIII\n\n{TERM} {'The parties shall meet to discuss it in good faith. ' * 8}\n\nEnd.",
    ],
)
def test_the_window_alone_is_quoted_when_its_paragraph_is_long_or_open(text):
    window = TERM[: TERM.index(" The Term shall")]
    reply = answer("Can the agreement be renewed after 2011?", [source("1", 1, window, 0.97, text=text)])
    assert reply["citations"][0]["snippet"] == window.removeprefix("Section 8.1 Term. ")


def test_a_page_number_left_on_the_clauses_last_line_is_not_quoted():
    window = TERM[: TERM.index(" The Term shall")]
    text = f"ARTICLE VIII\n\n{TERM}\n7\n\n{EARLY}"
    reply = answer("Can the agreement be renewed after 2011?", [source("1", 1, window, 0.97, text=text)])
    assert reply["citations"][0]["snippet"] == TERM.removeprefix("Section 8.1 Term. ")


def test_a_lead_in_ending_in_a_colon_is_quoted_with_the_list_it_announces():
    # Quoted alone, "… if the other Party:" answers "when can it be terminated?" with nothing.
    lead = "C. Either Party may terminate this Agreement immediately on written notice if the other Party:"
    items = [
        "(i) ceases to do business in the normal course;",
        "(ii) makes an assignment for the benefit of creditors.",
    ]
    sibling = "D. Notwithstanding any termination, AGI shall retain all royalties paid."
    text = (
        f"B. Either may terminate for breach.\n\n  {lead}\n\n    {items[0]}\n\n    {items[1]}\n\n  {sibling}"
    )
    reply = answer("When can a party terminate immediately?", [source("1", 1, lead, 0.97, text=text)])
    assert reply["citations"][0]["snippet"] == f"{lead} {items[0]} {items[1]}"
    assert sibling not in reply["answer"]
