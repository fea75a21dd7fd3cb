"""A stated value must be written in the cited passages, or follow from a date and a length they
write: the arithmetic a lawyer expects is allowed, an invented date is not."""

from rag.answers.check import unsupported_values

TERM = "This Agreement is made as of October 31, 2019 and continues for five (5) years."


def test_a_computed_end_date_follows_from_the_passages():
    assert unsupported_values("It ends on 31 October 2024 [1].", [TERM]) == []
    assert unsupported_values("It ends on October 31, 2019 [1].", [TERM]) == []


def test_a_date_neither_written_nor_computed_is_unsupported():
    assert unsupported_values("It ends on 30 June 2025 [1].", [TERM]) == ["30 June 2025"]


def test_amounts_are_compared_by_their_number_whatever_the_currency_wording():
    passage = "The Licensee shall pay a fee of 5,000 U.S. dollars per month."
    assert unsupported_values("The fee is $5,000.00 a month [1].", [passage]) == []
    assert unsupported_values("The fee is $50,000 a month [1].", [passage]) == ["$50,000"]
