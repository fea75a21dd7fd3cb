"""The list a lead-in ending in a colon announces: read whole, paragraph by paragraph, up to the
lead's next sibling, another kind of paragraph or the budget, and marked where it goes on."""

from rag.llm.lists import OMISSION, announced_list

LEAD = (
    "C. Either Party may terminate this Agreement immediately following written notice to the other "
    "Party if the other Party:"
)
ITEMS = [
    "(i) ceases to do business in the normal course;",
    "(ii) is the subject of any proceeding related to its liquidation or insolvency which is not "
    "dismissed within ninety days;",
    "(iii) makes an assignment for the benefit of creditors.",
]
SIBLING = (
    "D. Notwithstanding any termination of this Agreement, AGI shall be entitled to retain all "
    "royalties paid."
)


def passage(*paragraphs: str) -> tuple[str, int]:
    """A passage with `paragraphs` after the lead-in, laid out as contracts are (indented, wrapped),
    and where the lead-in ends."""
    text = (
        "B. Either Party may terminate for breach.\n\n    "
        + LEAD
        + "\n\n"
        + "\n\n".join("        " + p.replace(" which ", "\n        which ") for p in paragraphs)
    )
    return text, text.index(LEAD) + len(LEAD)


def test_the_items_are_read_whole_up_to_the_leads_next_sibling():
    text, end = passage(*ITEMS, SIBLING, "Trailing words.")
    assert announced_list(text, end, LEAD) == " ".join(ITEMS)


def test_a_paragraph_without_a_marker_or_of_another_kind_ends_the_list():
    text, end = passage(*ITEMS[:2], "The rights of the parties shall survive the Term.", ITEMS[2])
    assert announced_list(text, end, LEAD) == " ".join(ITEMS[:2])
    text, end = passage(*ITEMS[:2], "10. Warranties. FCC warrants that the product conforms.")
    assert announced_list(text, end, LEAD) == " ".join(ITEMS[:2])


def test_a_list_longer_than_the_budget_is_cut_at_an_item_and_says_it_goes_on():
    text, end = passage(*ITEMS, SIBLING)
    assert announced_list(text, end, LEAD, budget=100) == ITEMS[0] + OMISSION
    # Not even the first item fits: it is cut at a word end.
    cut = announced_list(text, end, LEAD, budget=20)
    assert cut.endswith(OMISSION) and ITEMS[0].startswith(cut.removesuffix(OMISSION))


def test_where_the_passage_ends_inside_the_list_the_quote_says_it_goes_on():
    text, end = passage(*ITEMS[:2])  # the chunk ends after (ii); (iii) is in the next one
    assert announced_list(text, end, LEAD) == " ".join(ITEMS[:2]) + OMISSION
    text, end = passage(ITEMS[0], ITEMS[1][:40])  # cut inside (ii)
    assert announced_list(text, end, LEAD) == ITEMS[0] + OMISSION


def test_an_item_announcing_a_list_of_its_own_is_read_with_it():
    lead = "6. Wildform will establish and maintain the following presence on its site:"
    nested = [
        "a) During the first 30 days following closing:",
        "* a link to the Flix page on the front page;",
        "* a link in the product menu.",
        "b) For the first 90 days after closing:",
        "* a link on the demos page.",
    ]
    text = lead + "\n\n" + "\n\n".join(nested) + "\n\n7. Next section."
    assert announced_list(text, len(lead), lead) == " ".join(nested)


def test_a_formula_or_sentence_after_the_colon_is_the_whole_list():
    lead = "Each locality's percentage share shall be determined by the following formula:"
    formula = "sales within the locality / sales in the three localities"
    text = f"{lead}\n\n{formula}\n\nFor calendar year 2016, the fee is due by March 31.\n\n"
    assert announced_list(text, len(lead), lead) == formula


def test_nothing_follows_or_the_next_paragraph_is_the_leads_sibling():
    assert announced_list(LEAD, len(LEAD), LEAD) == ""
    text, end = passage(SIBLING)
    assert announced_list(text, end, LEAD) == ""
