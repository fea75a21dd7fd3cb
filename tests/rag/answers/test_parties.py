"""The sentence naming a contract's parties: the preamble's, or a title line's; never a recital's
"between" nor boilerplate about "the parties"."""

from rag.answers.parties import parties_span

PREAMBLE = (
    'This Distribution Agreement (the "Agreement") is made as of March 1, 2019 by and between Alpha Foods '
    'Inc., a Delaware corporation ("Alpha"), and Northwind LLC, a Texas limited liability company '
    '("Distributor").'
)


def quoted(text: str) -> str | None:
    span = parties_span(text)
    return text[span[0] : span[1]] if span else None


def test_the_preamble_sentence_is_found_whole_past_abbreviations():
    text = f"EXHIBIT 10.4\n\nDISTRIBUTION AGREEMENT\n\n{PREAMBLE} Alpha and Distributor agree as follows."
    assert quoted(text) == PREAMBLE


def test_a_title_line_naming_the_parties_counts():
    text = "DISTRIBUTOR AGREEMENT BETWEEN INGRAM MICRO AND NETGEAR\n\nAgreement Number: N115"
    assert quoted(text) == "DISTRIBUTOR AGREEMENT BETWEEN INGRAM MICRO AND NETGEAR"


def test_a_recitals_between_without_words_making_an_agreement_is_not_the_parties():
    text = (
        "WHEREAS, the Trust has borrowed money under a note between the Company and the Trust; and\n\n"
        "WHEREAS, the Company wishes to lend more."
    )
    assert quoted(text) is None


def test_a_document_without_a_preamble_in_its_opening_has_none():
    text = "1. Definitions. Words have their usual meaning.\n\n" + "Filler text. " * 600 + PREAMBLE
    assert quoted(text) is None
