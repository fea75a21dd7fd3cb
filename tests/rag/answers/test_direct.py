"""The answer's first sentence states the value, cites where it comes from, shows any arithmetic,
and says nothing a quoted text does not give."""

from datetime import date

import pytest

from rag.answers.dates import AGREEMENT, EFFECTIVE, anchors, term_end
from rag.answers.direct import Quote, opening
from rag.llm.base import Source

PREAMBLE = (
    'THIS SERVICES AGREEMENT is made as of the 31st day of October, 2019 (the "Effective Date"), by and '
    "between Alfa Corp. and Aesar LLC."
)
TERM = (
    "This Agreement shall commence on the Effective Date and continue for a period of five (5) years from "
    "the Effective Date, and shall automatically renew for successive two (2) year periods unless either "
    "party gives ninety (90) days prior written notice of non-renewal."
)
LAW = (
    "This Agreement shall be governed by the laws of the Commonwealth of Massachusetts, and the courts "
    "of New York shall have jurisdiction."
)
FEES = "Licensee shall pay a royalty of [***] percent of Net Sales and a fee of $5,000 per month."


def source(citation_id, text, chunk_number):
    return Source(
        citation_id=citation_id, document_id=1, title="Alfa", page=1, text=text, chunk_number=chunk_number
    )


PASSAGES = [source("1", TERM, 5), source("2", PREAMBLE, 1), source("3", LAW, 9), source("4", FEES, 7)]


def first(question, *quoted):
    return opening(question, [Quote(s, s.text) for s in quoted], PASSAGES)


def test_the_end_of_a_term_is_computed_from_the_start_the_document_gives():
    found = first("When does the initial term expire?", PASSAGES[0])
    assert found.sentence == "31 October 2024: 5 years from the Effective Date, 31 October 2019 [1][2]."
    assert [q.source.citation_id for q in found.added] == ["2"]  # the passage that dates it is quoted
    assert "31st day of October, 2019" in found.added[0].text


def test_no_end_date_without_a_start_the_document_gives():
    undated = [s for s in PASSAGES if s.citation_id != "2"]
    assert opening("When does the term end?", [Quote(PASSAGES[0], TERM)], undated) is None


def test_the_agreement_date_comes_from_the_preamble_and_leads():
    found = first("When was this agreement signed?", PASSAGES[2])
    assert found.sentence == "31 October 2019 [2]."
    assert found.leads and found.added[0].source.citation_id == "2"


def test_the_period_asked_for_among_a_term_clauses_periods():
    assert first("What's the notice period for non-renewal?", PASSAGES[0]).sentence == "90 days [1]."
    assert first("How long is each renewal term?", PASSAGES[0]).sentence == "2 years [1]."
    assert first("How long is the initial term?", PASSAGES[0]).sentence == "5 years [1]."


def test_the_governing_law_not_the_courts_seat():
    assert (
        first("What law governs this agreement?", PASSAGES[2]).sentence
        == "The laws of Massachusetts govern [3]."
    )


def test_the_governing_law_another_passage_names_is_stated_with_its_sentence_first():
    forum = source("5", "Any lawsuit may be brought in the courts of the Commonwealth of Massachusetts.", 8)
    found = opening("What law governs this agreement?", [Quote(forum, forum.text)], [forum, *PASSAGES])
    assert found.sentence == "The laws of Massachusetts govern [3]."
    assert found.leads and found.added[0].source.citation_id == "3"
    assert found.added[0].text.startswith("This Agreement shall be governed by the laws of")


def test_no_governing_law_is_said_only_where_no_passage_chooses_one():
    incorporated = source(
        "6", "Each party is a corporation organized under the laws of its state of incorporation.", 2
    )
    found = opening(
        "What law governs this agreement?", [Quote(incorporated, incorporated.text)], [incorporated]
    )
    assert found.sentence.startswith("No governing-law clause was found") and not found.states_value
    # A choice of law that names no place is a clause: the quotes answer, no "No".
    unnamed = source(
        "7", "This Agreement is governed by the laws of the country where the Seller resides.", 9
    )
    assert (
        opening(
            "What law governs this agreement?",
            [Quote(incorporated, incorporated.text)],
            [incorporated, unnamed],
        )
        is None
    )


def test_amounts_and_redacted_values():
    assert first("What is the monthly fee?", PASSAGES[3]).sentence == "$5,000 [4]."
    assert first("What royalty rate does the licensee pay?", PASSAGES[3]).sentence == (
        "The rate is redacted in this copy ([***]) [4]."
    )


def test_nothing_is_stated_that_the_quotes_do_not_give():
    assert first("What is the monthly fee?", PASSAGES[2]) is None
    assert first("Does this agreement contain a non-compete?", PASSAGES[0]) is None


def test_anchors_and_a_start_given_as_a_date():
    known = anchors(PREAMBLE)
    assert known[AGREEMENT].value == known[EFFECTIVE].value == date(2019, 10, 31)
    end = term_end("for a period of two (2) years commencing on January 1, 2005", {})
    assert end.value == date(2007, 1, 1) and end.start_date == date(2005, 1, 1)
    third = term_end("until the third anniversary of the Effective Date", known)
    assert third.value == date(2022, 10, 31)


def test_an_effective_date_defined_by_reference_to_the_date_above():
    text = (
        'This Agreement is entered into on March 3, 2015. 1.4 "Effective Date" means the date first '
        "written above."
    )
    assert anchors(text)[EFFECTIVE].value == date(2015, 3, 3)


@pytest.mark.parametrize(
    ("clause", "end"),
    [
        # the start named first, the length after
        (
            "The term shall begin on the date of execution and continue for a period of two years.",
            date(2021, 10, 31),
        ),
        (
            "This Agreement shall commence on the Effective Date and extend for three (3) years thereafter.",
            date(2022, 10, 31),
        ),
        (
            "It shall be effective on 06 October 2000 and shall have a duration of two years.",
            date(2002, 10, 6),
        ),
        # the length first, the start after; an anniversary in digits
        ("The Initial Term is twelve months, commencing on the Effective Date.", date(2020, 10, 31)),
        ("The term ends on the five (5) year anniversary of the Effective Date.", date(2024, 10, 31)),
        ("This agreement will be in effect until the end of 2006.", date(2006, 12, 31)),
        # a renewal after the length does not make the length a renewal's; the start in quote marks
        (
            "It shall commence on the Effective Date and be valid for a period of five (5) years with "
            "automatic renewal of one year thereafter.",
            date(2024, 10, 31),
        ),
        (
            'Its obligations become effective upon the "Effective Date" and last one year thereafter.',
            date(2020, 10, 31),
        ),
        ("It continues for twelve (12) full calendar months from the Effective Date.", date(2020, 10, 31)),
    ],
)
def test_term_ends_as_contracts_write_them(clause, end):
    assert term_end(clause, anchors(PREAMBLE)).value == end


def test_a_renewal_or_notice_period_is_not_the_term():
    clause = (
        "This Agreement shall commence on the Effective Date and shall renew for successive one (1) year "
        "periods unless ninety (90) days notice is given."
    )
    assert term_end(clause, anchors(PREAMBLE)) is None


def test_an_end_date_question_never_gets_another_date_of_the_clause():
    # The option's start date is no end of the term; the preamble's date is no end either.
    option = source("5", '1.32 "Option Starting Date" means February 1, 2020.', 3)
    assert opening("When does the agreement expire?", [Quote(option, option.text)], PASSAGES) is None
    ends = source("6", "This Agreement shall remain in force until December 31, 2025.", 4)
    assert opening("When does the agreement expire?", [Quote(ends, ends.text)], PASSAGES).sentence == (
        "31 December 2025 [6]."
    )


def test_the_agreement_date_from_a_signature_block_anywhere_in_the_document():
    signed = (
        "IN WITNESS WHEREOF, the undersigned hereby execute this Joint Filing Agreement as of "
        "February 19, 2020."
    )
    assert anchors(signed, opening=False)[AGREEMENT].value == date(2020, 2, 19)
    # Outside the document's opening, a date merely after "on" is no agreement date.
    assert anchors("Payment is due on March 3, 2021.", opening=False) == {}


def test_a_renewal_question_never_gets_the_terms_length():
    term = source("7", "The term of this Agreement shall continue for a period of two years.", 4)
    assert opening("Does the agreement renew, and for how long?", [Quote(term, term.text)], PASSAGES) is None


def test_a_term_that_ends_only_when_terminated_has_no_end_date():
    endless = source(
        "8", "The term will commence on approval and will end when terminated by either party.", 4
    )
    assert opening("When does this agreement expire?", [Quote(endless, endless.text)], PASSAGES).sentence == (
        "No fixed end date: it runs until terminated [8]."
    )


def test_a_date_a_quote_gives_another_agreement_is_never_this_ones():
    recital = source(
        "9",
        "WHEREAS, the parties entered into that certain Stock Purchase Agreement dated as of April 7, 2003.",
        2,
    )
    found = opening("When was this agreement signed?", [Quote(recital, recital.text)], [recital, *PASSAGES])
    assert found.sentence == "31 October 2019 [2]."  # the preamble's date, not the recital's
    # With no date of its own in the passages, none is stated.
    assert opening("When was this agreement signed?", [Quote(recital, recital.text)], [recital]) is None


def test_a_quote_that_misses_the_value_beside_it_is_widened_to_hold_it():
    text = (
        "RESPONSIBILITIES OF THE CUSTOMER The Customer shall pay the recurring monthly fee in the amount "
        "of $450. The Customer shall pay the recurring monthly fees by the 5th day of each month."
    )
    fees = source("10", text, 3)
    lead = "The Customer shall pay the recurring monthly fees by the 5th day of each month."
    found = opening("What is the monthly fee?", [Quote(fees, lead)], [fees])
    assert found.sentence == "$450 [10]."
    assert found.lead_text == (
        "The Customer shall pay the recurring monthly fee in the amount of $450. "
        "The Customer shall pay the recurring monthly fees by the 5th day of each month."
    )


def test_a_quote_saying_when_it_takes_effect_answers_over_the_preamble():
    closing = source("11", "This Amendment shall only become effective upon the Closing.", 3)
    assert (
        opening("When does this amendment become effective?", [Quote(closing, closing.text)], PASSAGES)
        is None
    )
    dated = source("12", "This Agreement shall become effective on June 1, 1998 and continue for a year.", 3)
    found = opening("When does this agreement take effect?", [Quote(dated, dated.text)], PASSAGES)
    assert found.sentence == "1 June 1998 [12]."


def test_an_effective_date_clause_pointing_at_the_defined_date_uses_it_and_a_fee_change_is_no_such_clause():
    defined = source(
        "13", "This Agreement shall take effect as of the Effective Date and expire on completion.", 3
    )
    found = opening("What is the effective date?", [Quote(defined, defined.text)], PASSAGES)
    assert found.sentence == "31 October 2019 [2]."
    fees = source(
        "14", "Either Party may request a change in Fees, and such change shall take effect on [***].", 3
    )
    assert (
        opening("What is the effective date?", [Quote(fees, fees.text)], PASSAGES).sentence
        == "31 October 2019 [2]."
    )


def test_a_deadline_counted_from_the_effective_date_is_no_end_of_the_term():
    deadline = source("15", "The Licensee shall deliver the plan within 45 days from the Effective Date.", 3)
    assert opening("When does this agreement expire?", [Quote(deadline, deadline.text)], PASSAGES) is None


def test_a_period_of_another_kind_is_no_term():
    notice = source(
        "16",
        "This Agreement shall continue in effect until either Party gives thirty (30) day prior written "
        "notice.",
        3,
    )
    assert opening("How long does the agreement last?", [Quote(notice, notice.text)], PASSAGES) is None


SIGNED_ONLY = (
    "THIS MANUFACTURING AGREEMENT is entered into on January 21st, 2002, by Nice Ltd and Flextronics."
)


def test_an_undated_effective_date_is_counted_from_the_agreements_date_and_said_to_be():
    preamble = source("2", SIGNED_ONLY, 1)
    term = source(
        "1",
        "The initial term shall commence on the Effective Date and extend for three (3) years thereafter.",
        6,
    )
    found = opening("When does the term end?", [Quote(term, term.text)], [term, preamble])
    assert found.sentence == (
        "21 January 2005, if the Effective Date is the agreement's date, 21 January 2002: 3 years from the "
        "Effective Date [1][2]. The agreement does not date the Effective Date itself."
    )
    assert found.added[0].source.citation_id == "2"


def test_a_term_with_no_start_is_counted_from_the_effective_date_or_the_agreements_date():
    term = source("1", "The term of this Agreement is twenty-four (24) months.", 6)
    signed = source("2", "This Services Agreement is dated as of June 30, 2017, between A and B.", 1)
    found = opening("When does this agreement expire?", [Quote(term, term.text)], [term, signed])
    assert found.sentence == (
        "30 June 2019, if the term runs from the agreement's date, 30 June 2017: 24 months [1][2]. "
        "The clause gives the term no start."
    )
    found = opening("When does this agreement expire?", [Quote(term, term.text)], [term, PASSAGES[1]])
    assert found.sentence.startswith(
        "31 October 2021, if the term runs from the Effective Date, 31 October 2019"
    )


def test_a_start_the_document_never_dates_is_not_presumed():
    clause = "It shall continue for an initial period of twenty-five (25) years following the RFS Date."
    assert term_end(clause, anchors(SIGNED_ONLY)) is None
    # and a renewal's or a notice's length is no term
    assert term_end("Renewal terms of one (1) year each apply.", anchors(SIGNED_ONLY)) is None


def test_a_deadline_inside_a_term_clause_is_not_its_length():
    clause = (
        "The term of this Agreement shall become effective upon ETON executing a supply agreement within "
        "forty-five (45) days of the Execution Date."
    )
    assert term_end(clause, anchors(PREAMBLE)) is None


def test_a_term_bound_to_an_event_has_no_fixed_term():
    bound = source(
        "9", "This License shall continue in force until the last of the Licensed Patents expires.", 4
    )
    found = opening("When does this agreement expire?", [Quote(bound, bound.text)], PASSAGES)
    assert found.sentence == "No fixed term: it runs until the last of the Licensed Patents expires [9]."
    assert not found.states_value
    elsewhere = source(
        "9", "The Term will remain in effect until the termination date specified in Exhibit A.", 4
    )
    found = opening("When does this agreement expire?", [Quote(elsewhere, elsewhere.text)], PASSAGES)
    assert found is None or "No fixed term" not in found.sentence
    cut = source("9", "This Agreement shall be in effect until March 18.", 4)  # the year cut off
    found = opening("When does the term end?", [Quote(cut, cut.text)], PASSAGES)
    assert found is None or "No fixed term" not in found.sentence
    defined = source("9", 'The term shall continue in effect until Achaogen ceases development ("Term").', 4)
    found = opening("When does the term end?", [Quote(defined, defined.text)], PASSAGES)
    assert found.sentence == "No fixed term: it runs until Achaogen ceases development [9]."  # no quote marks
    redacted = source("9", "The term will not end until Excite displays a total of [*****] impressions.", 4)
    found = opening("When does the term end?", [Quote(redacted, redacted.text)], PASSAGES)
    expected = "No fixed term: it runs until Excite displays a total of (redacted) impressions [9]."
    assert found.sentence == expected


def test_a_start_deadline_defined_as_the_effective_date_is_no_end():
    clause = source(
        "9",
        "The term shall become effective upon acceptance for review by the FDA no later than September 2, "
        '2019 (such date, the "Effective Date") and shall end upon the expiration of the Agreement.',
        4,
    )
    found = opening("When does this agreement expire?", [Quote(clause, clause.text)], PASSAGES)
    assert found is None or "2 September 2019" not in found.sentence
    # The quote may stop at the date: what follows it in the passage still counts.
    cut = Quote(clause, "The term shall become effective upon acceptance no later than September 2, 2019")
    found = opening("When does this agreement expire?", [cut], PASSAGES)
    assert found is None or "2 September 2019" not in found.sentence


def test_a_term_commencing_on_the_effective_date_does_not_date_the_agreement():
    term = (
        "The term of this Agreement shall commence on the Effective Date and end on November 30, 2014 "
        '(the "Initial Term").'
    )
    assert anchors(term, opening=False) == {}  # "Effective Date" is the defined term, not "effective"
    passages = [source("1", term, 2), source("2", PREAMBLE, 1)]
    found = opening("What is the date of this agreement?", [Quote(passages[0], term)], passages)
    assert found.sentence == "31 October 2019 [2]."


def test_the_opening_passage_dates_the_agreement_before_a_later_one():
    amended = source("1", "This Amendment is made and entered into as of March 3, 2016 by the parties.", 8)
    passages = [amended, source("2", PREAMBLE, 1)]
    found = opening("When was this agreement signed?", [Quote(amended, amended.text)], passages)
    assert found.sentence == "31 October 2019 [2]."


SIGNATURES = (
    "IN WITNESS WHEREOF, the parties have executed this Agreement.\n\n"
    "ALFA CORP. AESAR LLC\n\nBy: /s/ Jason Few By: /s/ Vijay Swarup\n\nName: Jason Few Name: Vijay Swarup\n\n"
    "Title: President Title: VP R&D\n\nDate: November 5, 2019 Date: November 7, 2019"
)


def test_an_agreement_dated_only_by_its_signatures_is_dated_by_the_last_one():
    found = anchors(SIGNATURES, opening=False)
    assert found[AGREEMENT].value == date(2019, 11, 7)  # made when the last party signs
    row = "By: /s/ Victor Bozzo By: /s/ Christine Gardner Title Title 4/24/2018 04/25/2018 Date Date"
    assert anchors(row, opening=False)[AGREEMENT].value == date(2018, 4, 25)  # a table's labels after
    assert anchors("Date: November 5, 2019. Payment is due then.", opening=False) == {}  # no signatures


def test_an_effective_date_at_the_last_signature_is_that_signatures_date():
    text = (
        'This Software Hosting Agreement (the "Agreement") is entered into and effective as of the later '
        'of the two signature dates below (the "Effective Date") by Alfa Corp. and Aesar LLC.\n\n'
        f"1. Hosting. Alfa shall host the Software.\n\n{SIGNATURES}"
    )
    assert anchors(text)[EFFECTIVE].value == date(2019, 11, 7)
    assert anchors(text)[AGREEMENT].value == date(2019, 11, 7)  # in a short contract's opening too
    defined = f'"Effective Date" shall mean the date of last signature below.\n\n{SIGNATURES}'
    assert anchors(defined, opening=False)[EFFECTIVE].value == date(2019, 11, 7)


def test_a_passage_dating_the_agreement_in_words_wins_over_a_signature_date():
    signed = source("1", f"PROMOTION AGREEMENT\n\n{SIGNATURES}", 1)
    commenced = source("2", "This Agreement shall commence effective June 1, 1998, for three years.", 6)
    found = opening(
        "What is the date of this agreement?", [Quote(commenced, commenced.text)], [signed, commenced]
    )
    assert found.sentence == "1 June 1998 [2]."


def test_a_cover_pages_date_dates_the_agreement_and_its_label_the_effective_date():
    letter = "AGENCY AGREEMENT\n\nMay 14, 2014\n\nKeefe, Bruyette & Woods, Inc.\n\nLadies and Gentlemen:"
    assert anchors(letter)[AGREEMENT].value == date(2014, 5, 14)  # a letter's date, alone on its line
    assert anchors(letter, opening=False) == {}  # only the document's opening is a cover page
    assert anchors("Source: ALFA CORP., 8-K, 12/27/2019\n\nThe parties agree as follows.") == {}
    cover = "OUTSOURCING AGREEMENT\n\nBETWEEN IBM AND MSL\n\nEFFECTIVE DATE\n\n    JUNE 1, 1998\n\n1. Scope"
    assert anchors(cover)[EFFECTIVE].value == date(1998, 6, 1)
    assert AGREEMENT not in anchors(cover)  # the date it takes effect is not the date it was made


def test_an_agreement_dated_only_by_its_effective_date_is_said_to_be_that_date():
    preamble = source("1", "This Agreement is entered into as of the Effective Date (as defined below).", 1)
    defined = source("2", '"Effective Date" shall mean December 5, 2014.', 3)
    found = opening(
        "What is the date of this agreement?", [Quote(preamble, preamble.text)], [preamble, defined]
    )
    assert found.sentence == "5 December 2014 (the Effective Date) [2]."


def test_a_renewal_period_written_without_a_number_is_stated():
    yearly = source(
        "1",
        "B. Unless either party gives written notice to terminate this Agreement at least six (6) months "
        "prior to the end of said Initial Term, this Agreement shall continue on a year to year basis.",
        4,
    )
    assert first("Does the agreement renew, and for how long?", yearly).sentence == "1 year [1]."
    assert first("What's the notice period for non-renewal?", yearly).sentence == "6 months [1]."
    annual = source(
        "2",
        "This Agreement shall continue in effect for two years from the date hereof, and thereafter shall "
        "continue automatically for successive annual periods.",
        4,
    )
    assert first("How long is the renewal term?", annual).sentence == "1 year [2]."
    assert first("How long is the initial term?", annual).sentence == "2 years [2]."


def test_the_parties_are_named_from_the_preamble_and_its_sentence_quoted_first():
    found = first("Who are the parties to this agreement?", PASSAGES[0])
    assert found.sentence == "Alfa and Aesar [2]."
    assert found.leads and found.added[0].text.startswith("THIS SERVICES AGREEMENT is made as of")
    assert first("Between whom is this contract?", PASSAGES[0]).sentence == "Alfa and Aesar [2]."
    # No preamble among the passages: nothing is stated.
    assert opening("Who are the parties?", [Quote(PASSAGES[0], TERM)], [PASSAGES[0]]) is None


def test_a_deadline_question_reads_its_own_words_not_the_terms():
    confirm = source(
        "1",
        "FCC shall promptly, but in no event later than three (3) days after the date of such purchase "
        "order, confirm its acceptance or rejection of such purchase order by written notice.",
        5,
    )
    ship = source("2", "Shipments must be made within ten (10) days for the term of each purchase order.", 6)
    question = "How many days does the supplier have to confirm a purchase order?"
    # The lead quote (search's best window) holds the deadline; a later one a period "for the term".
    found = opening(question, [Quote(confirm, confirm.text), Quote(ship, ship.text)], [confirm, ship])
    assert found.sentence == "3 days [1]."


def test_a_term_running_until_terminated_is_no_period_a_later_quote_gives():
    endless = source("1", "This Agreement shall continue indefinitely until terminated by either Party.", 3)
    later = source(
        "2",
        "The Party in default shall not compete for a period of six (6) months from the effective date "
        "of termination.",
        9,
    )
    found = opening("How long does it last?", [Quote(endless, endless.text), Quote(later, later.text)], [])
    assert found.sentence == "No fixed end: it runs until terminated [1]."


def test_a_date_asked_of_no_known_event_is_the_one_the_lead_quote_gives():
    """ "By when does Darren want our comments?": the e-mail's one date, stated first; with two
    dates in the quote, which one is meant is left to the reader."""
    one = source("1", "He would like our comments on the addendum by Friday, December 15, 2017.", 3)
    assert first("By when does Darren want our comments?", one).sentence == "15 December 2017 [1]."
    two = source("1", "Comments by December 15, 2017; signature by January 5, 2018.", 3)
    assert first("By when does Darren want our comments?", two) is None
    assert first("By when does Darren want our comments?", source("1", "As soon as you can.", 3)) is None


def test_an_end_date_the_term_clause_states_wins_over_a_renewal_period():
    clause = (
        'The term of this JSMA shall commence on May 1, 2020 (the "Commencement Date") and ends at April '
        '30, 2029 (the "Term"), with automatic renewals each for a period of five (5) years (a "Renewal '
        'Term") unless notice is given pursuant to 5.2.'
    )
    assert first("When does the agreement expire?", source("1", clause, 4)).sentence == "30 April 2029 [1]."


def test_a_renewal_period_written_after_the_term_is_no_term():
    """The renewal's words stand well before its length ("automatic renewals each for a period of
    five (5) years"): no end is computed from it."""
    clause = (
        'The term of this JSMA shall commence on May 1, 2020 (the "Commencement Date") and ends at April '
        '30, 2029 (the "Term"), with automatic renewals each for a period of five (5) years (a "Renewal '
        'Term") unless notice is given pursuant to 5.2.'
    )
    assert term_end(clause, {}) is None


def test_a_proviso_that_outlasts_the_end_date_is_stated_with_it():
    # The Glu amendment: the Term ends in 2006, the licences in each Property run on to 2008.
    glu = source(
        "5",
        'The rights granted hereunder shall expire on December 31, 2006 (the "Term"); provided, however, '
        "that with respect to each Property, including Mr. and Mrs. Smith, all licenses granted herein "
        "will continue in full force and effect until March 31, 2008.",
        3,
    )
    found = opening("When do the rights expire?", [Quote(glu, glu.text)], [glu])
    assert found.sentence == "31 December 2006, but its proviso runs to 31 March 2008 [5]."
    # A later date in another sentence, or one the proviso does not give as an end, is not one.
    plain = source(
        "6",
        "This Agreement shall remain in force until December 31, 2025. Provided that the parties agree in "
        "writing, it may be renewed. Fees are due by January 15, 2026.",
        3,
    )
    assert (
        opening("When does it expire?", [Quote(plain, plain.text)], [plain]).sentence
        == "31 December 2025 [6]."
    )
