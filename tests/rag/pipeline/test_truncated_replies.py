"""Salvaging a model reply cut off at the token limit (rag.pipeline.postprocess): complete
sentences only, with their citation markers; quotes and brackets never left open; citation objects
kept when sent in full; escapes decoded; the disclaimer says it was cut off."""

import pytest

from rag.llm import Source
from rag.pipeline.postprocess import TRUNCATED_DISCLAIMER, complete_sentences, process

SOURCES = (
    Source("1", 42, "Initech lease", 3, "Tenant shall pay rent of $4,000 monthly. Late rent bears interest."),
)


@pytest.mark.parametrize(
    ("cut", "kept"),
    [
        ("Rent is $4,000 monthly [1]. Late rent bears inter", "Rent is $4,000 monthly [1]."),
        ('The lease states: "Tenant shall pay rent of $4,000 monthly. Late', ""),
        (
            'The lease states: "Tenant shall pay rent of $4,000 monthly." [1]; and "Late',
            'The lease states: "Tenant shall pay rent of $4,000 monthly." [1]',
        ),
        ("Rent is due [1]. See Section 10.", "Rent is due [1]."),  # "10." may be "10.2" cut short
        ("Rent is due [Initech lease, p.", ""),
    ],
)
def test_only_complete_sentences_are_kept(cut, kept):
    assert complete_sentences(cut) == kept


def test_a_reply_cut_in_its_citations_keeps_its_whole_answer_and_whole_citations():
    text = (
        '{"answer": "Rent is \\u00244,000 monthly [1]. Late rent bears interest [1].", '
        '"citations": [{"id": "1", "snippet": "Tenant shall pay rent of $4,000 monthly."}, {"id": "1", "sni'
    )
    processed = process(text, SOURCES, follow_up_count=2, truncated=True)
    assert processed.answer == "Rent is $4,000 monthly [1]. Late rent bears interest [1]."
    assert [(c.token, c.snippet) for c in processed.citations] == [
        ("1", "Tenant shall pay rent of $4,000 monthly.")
    ]
    assert processed.truncated and processed.disclaimer == TRUNCATED_DISCLAIMER


def test_unterminated_json_is_salvaged_even_when_the_provider_did_not_say_it_was_cut():
    processed = process('{"answer": "Rent is $4,000 monthly [1]. Late', SOURCES, follow_up_count=0)
    assert processed.answer == "Rent is $4,000 monthly [1]." and processed.truncated


def test_a_cut_off_plain_text_reply_keeps_its_complete_sentences():
    processed = process(
        "Rent is $4,000 monthly [1]. Late rent be", SOURCES, follow_up_count=0, truncated=True
    )
    assert processed.answer == "Rent is $4,000 monthly [1]." and processed.output_format == "text"


def test_a_whole_reply_is_untouched():
    processed = process('{"answer": "Rent is $4,000 monthly [1]."}', SOURCES, follow_up_count=0)
    assert processed.answer == "Rent is $4,000 monthly [1]." and not processed.truncated
    assert processed.disclaimer == ""
