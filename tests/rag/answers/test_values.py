"""Typed values read from contract text as contracts write them, each once, never guessed."""

from datetime import date

from rag.answers.values import (
    amounts_in,
    blank_dates_in,
    dates_in,
    durations_in,
    governing_jurisdiction,
    jurisdictions_in,
    percents_in,
    redactions_in,
)


def test_dates_in_the_forms_contracts_use():
    text = (
        "made as of the 24th day of June, 2020; amended Jan. 5th, 2001, on 6/30/2019 and 2018-03-01; "
        "effective October 31 2019; in effect until March 18. 2021"
    )
    assert [f.value for f in dates_in(text)] == [
        date(2020, 6, 24),
        date(2001, 1, 5),
        date(2019, 6, 30),
        date(2018, 3, 1),
        date(2019, 10, 31),
        date(2021, 3, 18),  # a full stop typed for the comma
    ]


def test_an_impossible_date_is_no_date():
    assert dates_in("February 30, 2020 and 13/45/2020") == []


def test_a_blank_or_redacted_day_is_a_blank_date_not_a_date():
    text = "entered into this ____ day of June, 2020 and dated [***], 2019"
    assert dates_in(text) == []
    assert [f.value for f in blank_dates_in(text)] == [2020]


def test_durations_in_words_digits_and_both():
    text = (
        "thirty (30) days; one-year; twenty-four (24) months; 5 years; a month; "
        "one hundred and eighty (180) days; ninety days"
    )
    assert [f.value for f in durations_in(text)] == [30, 365, 720, 1825, 30, 180, 90]
    assert [f.text for f in durations_in("sixty (60) calendar days")] == ["60 days"]


def test_the_governing_jurisdiction_is_the_one_the_law_is_of_not_the_courts_seat():
    text = (
        "The courts of New York shall have exclusive jurisdiction. This Agreement shall be governed by "
        "the laws of the Commonwealth of Massachusetts."
    )
    assert governing_jurisdiction(text).value == "Massachusetts"
    assert governing_jurisdiction("Delaware law governs this Agreement.").value == "Delaware"
    assert governing_jurisdiction("The Supplier has offices in Ohio.") is None
    # Where a party is incorporated is no choice of law.
    assert governing_jurisdiction("Acme Inc., a corporation organized under the laws of Ohio") is None


def test_a_governing_law_clause_in_capitals_or_performed_and_enforced_is_read():
    caps = "THIS AGREEMENT SHALL BE GOVERNED BY THE INTERNAL LAWS OF THE COMMONWEALTH OF PENNSYLVANIA."
    assert governing_jurisdiction(caps).value == "Pennsylvania"
    assert governing_jurisdiction("CONTROLLED BY THE LAWS OF THE STATE OF NEW YORK").value == "New York"
    # "performed" is no "formed under the laws of" (where a party is incorporated).
    performed = (
        "shall be governed, construed, performed, and enforced in accordance with the laws of the State of "
        "California."
    )
    assert governing_jurisdiction(performed).value == "California"
    # A name in lower case is a word, not a place.
    assert governing_jurisdiction("governed by the law of supply of turkey and chile") is None


def test_washington_is_a_state_only_when_the_text_says_so():
    assert jurisdictions_in("a meeting in Washington, D.C.") == []
    assert [f.value for f in jurisdictions_in("the laws of the State of Washington")] == ["Washington"]


def test_a_longer_name_wins_over_the_shorter_inside_it():
    found = governing_jurisdiction("governed by the laws of England and Wales")
    assert found.value == "England and Wales"


def test_amounts_percentages_and_redactions():
    text = "a fee of US$5,000 per month, 7.5% of Net Sales, EUR 1.2 million, 250 dollars and [***] percent"
    assert [f.value for f in amounts_in(text)] == ["US$5,000", "EUR 1.2 million", "250 dollars"]
    assert [f.value for f in percents_in(text)] == ["7.5%"]
    assert [f.text for f in redactions_in(text)] == ["[***]"]


def test_periods_written_without_a_number():
    assert [f.text for f in durations_in("renewed for an additional year within 30 days")] == [
        "1 year",
        "30 days",
    ]
    assert [f.text for f in durations_in("continue on a month-to-month basis")] == ["1 month"]
    assert [f.text for f in durations_in("for successive annual periods")] == ["1 year"]
    assert durations_in("an annual fee of $5,000 and the annual report") == []
