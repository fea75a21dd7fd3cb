"""Suggested follow-ups name the document by its title, never a file name, and keep the topic."""

import pytest

from rag.pipeline.follow_ups import generic_follow_ups, readable_title

TITLE = "Distributor Agreement — Tripath Technology / Detto"


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        (TITLE, TITLE),
        ("MSA", "MSA"),
        ("snotarator-2019", "this document"),
        ("msa_final.v3", "this document"),
        ("", "this document"),
    ],
)
def test_a_file_names_title_is_never_shown(title, shown):
    assert readable_title(title) == shown


def test_follow_ups_name_the_topic_and_the_document():
    suggestions = generic_follow_ups("What law governs the distributor agreement?", TITLE)
    assert suggestions[0] == f"Are there exceptions or conditions to the governing law provisions of {TITLE}?"
    assert all(" this " not in s and " this?" not in s for s in suggestions)
    assert sum(TITLE in s for s in suggestions) >= 3 and sum("governing law" in s for s in suggestions) >= 3


def test_without_a_topic_the_follow_ups_still_say_what_they_ask():
    suggestions = generic_follow_ups("Who is the seller?", "snotarator-2019")
    assert suggestions and all("snotarator" not in s for s in suggestions)
    assert all("to this in" not in s and "same point" not in s for s in suggestions)  # the old vague ones
