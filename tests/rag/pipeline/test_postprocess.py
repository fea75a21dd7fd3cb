"""Parsing model replies: JSON, fenced JSON, JSON inside prose, plain text with citation markers,
malformed output; citation mapping; confidence normalization; follow-up count; "I don't know"."""

import json

import pytest

from rag.llm import Source
from rag.pipeline.postprocess import normalize_confidence, process, resolve

SOURCES = [
    Source(citation_id="1", document_id=42, title="Lease agreement", page=3, text="Rent is due monthly."),
    Source(citation_id="2", document_id=43, title="Lease agreement", page=7, text="The lease ends in 2030."),
    Source(citation_id="3", document_id=50, title="Supply contract", page=1, text="Delaware law governs."),
]
REPLY = {
    "answer": "Rent is due monthly [1] and Delaware law governs [3].",
    "citations": [{"id": "1", "doc_id": "42", "snippet": "Rent is due monthly."}, {"id": "3", "snippet": ""}],
    "follow_ups": ["When is rent late?", "Which courts?", "What about renewal?"],
    "confidence": 0.8,
    "disclaimer": "Not legal advice.",
}


def _ids(result):
    return [c.source.citation_id for c in result.citations]


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(REPLY),
        "```json\n" + json.dumps(REPLY, indent=2) + "\n```",
        "Here is my answer:\n" + json.dumps(REPLY) + "\nI hope this helps.",
    ],
    ids=["plain", "fenced", "in-prose"],
)
def test_json_replies_in_every_wrapping(text):
    result = process(text, SOURCES, follow_up_count=2)
    assert result.output_format == "json"
    assert result.answer == REPLY["answer"]
    assert _ids(result) == ["1", "3"]
    assert result.citations[0].snippet == "Rent is due monthly."
    assert result.follow_ups == ["When is rent late?", "Which courts?"]  # exactly follow_up_count
    assert result.confidence == 0.8 and result.disclaimer == "Not legal advice."
    assert result.invalid_citations == []


def test_invented_citations_are_kept_as_invalid():
    invented = [{"id": "7", "doc_id": "999"}]
    reply = dict(REPLY, answer="Rent is due monthly [1], see also [9].", citations=invented)
    result = process(json.dumps(reply), SOURCES, follow_up_count=2)
    assert _ids(result) == ["1"]
    assert result.invalid_citations == ["7", "9"]


def test_plain_text_with_every_citation_style():
    text = "Rent is monthly [1]. The lease ends in 2030 [Lease agreement, page 7]. Law: [doc_50][sic]."
    result = process(text, SOURCES, follow_up_count=2)
    assert result.output_format == "text"
    assert result.answer == text
    assert _ids(result) == ["1", "2", "3"]
    assert result.invalid_citations == [] and result.confidence is None and result.follow_ups == []


@pytest.mark.parametrize("text", ["", "   ", "{not json", '{"answer": 5}', "[]"])
def test_malformed_output_never_raises(text):
    result = process(text, SOURCES, follow_up_count=2)
    assert result.citations == []
    assert result.answer in (None, text.strip())


@pytest.mark.parametrize(
    "text",
    ["I don't know.", '{"answer": "I do not know", "citations": [{"id": "1"}]}', "Information not found."],
)
def test_i_dont_know_is_no_answer_and_no_citations(text):
    result = process(text, SOURCES, follow_up_count=2)
    assert result.answer is None and result.citations == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.85, 0.85),
        ("0.85", 0.85),
        (85, 0.85),
        ("85%", 0.85),
        ("high", 0.85),
        (1.0, 1.0),
        (-3, 0.0),
        (None, None),
        ("unsure", None),
        (True, None),
        (float("nan"), None),
    ],
)
def test_confidence_is_normalized_to_0_1(value, expected):
    assert normalize_confidence(value) == expected


def test_resolution_by_id_document_title_and_page():
    assert resolve("2", SOURCES).citation_id == "2"
    assert resolve("doc_50", SOURCES).citation_id == "3"
    assert resolve("doc_43", SOURCES).citation_id == "2"
    assert resolve("43", SOURCES) is None  # numbered citations: a bare number is a citation number
    assert resolve("Lease agreement, p. 7", SOURCES).citation_id == "2"
    assert resolve("lease agreement", SOURCES).citation_id == "1"  # the first passage of that title
    assert resolve("Unknown memo, page 1", SOURCES) is None


def test_an_invented_number_is_not_read_as_a_document_id_when_citations_are_numbered():
    numbered = [Source("1", 9, "Lease", 1, "Rent is due monthly."), Source("2", 4, "NDA", 1, "Secrets.")]
    assert resolve("9", numbered) is None
    assert resolve("doc_9", numbered) is numbered[0]
    result = process('{"answer": "Rent is monthly [9].", "citations": []}', numbered, follow_up_count=0)
    assert result.invalid_citations == ["9"] and result.citations == []


PLACED = [
    Source("1", 7, "Master Services", 1, "1. Services. Globex delivers.", section="", filename="msa.pdf"),
    Source(
        "2",
        7,
        "Master Services",
        4,
        "Section 10.25 Survival. Five years.",
        page_end=5,
        section="10.25 Survival",
    ),
    Source("3", 7, "Master Services", 5, "notice.\n\nSection 10.2 Termination. Ninety days.", chunk_number=6),
    Source("4", 8, "Acme, Inc. Lease", 2, "4. Rent. Monthly.", section="4. Rent", chunk_number=2),
]


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("Master Services, section 10.2", "3"),  # a heading in the text; 10.25 is not 10.2
        ("Master Services, § 10.25", "2"),  # the passage's own section heading comes first
        ("Master Services, section 10", "2"),  # a sub-section is within its section
        ("msa.pdf, section 1", "1"),  # by file name
        ("MSA.PDF", "1"),
        ("Master Services, pp. 5-6", "2"),  # the first passage covering a page of the range
        ("Master Services, page 5", "2"),  # pages 4-5
        ("Master Services, Chunk 6", "3"),
        ("Document: Master Services, chunk 6", "3"),
        ("Acme, Inc. Lease, clause 4", "4"),  # a comma in the title
        ("Acme, Inc. Lease", "4"),
        ("Master Services, page 9", None),  # the document is there, the page is not
        ("Master Services, section 7", None),
        ("Master Services, Chunk 1", None),
        ("msa.pdf, page 3", None),
        ("Unknown memo, section 4", None),
    ],
)
def test_resolution_by_place_in_a_document(token, expected):
    source = resolve(token, PLACED)
    assert (source.citation_id if source else None) == expected


def test_a_place_a_document_lacks_is_an_invalid_citation_not_another_passage():
    text = "Rent is monthly [Acme, Inc. Lease, section 4]. Survival [Master Services, section 7]."
    result = process(text, PLACED, follow_up_count=0)
    assert _ids(result) == ["4"]
    assert result.invalid_citations == ["Master Services, section 7"]
