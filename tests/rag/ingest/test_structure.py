"""Adaptive chunking (RAG_CHUNKING=adaptive): section and clause starts, passages that follow them."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import pytest

from rag.ingest.chunking import chunk_text
from rag.ingest.structure import chunk_document, structure_levels, structure_starts
from tests.rag.ingest.test_chunking import check_chunks, first_words, sentences


@dataclass(frozen=True)
class Heading:
    title: str
    start: int


def numbered_contract(rng: random.Random, sections: int = 12) -> tuple[str, list[int]]:
    """A contract of numbered sections with numbered clauses, and where each section starts."""
    parts, starts, pos = [], [], 0
    for n in range(1, sections + 1):
        section = f"{n}. SECTION {n} TITLE\n\n"
        for c in range(1, rng.randint(2, 4)):
            section += f"{n}.{c} " + sentences(rng, rng.randint(1, 3)) + "\n\n"
        starts.append(pos)
        parts.append(section)
        pos += len(section)
    return "".join(parts), starts


# ---------------------------------------------------------------- finding the structure


def test_structure_starts_at_numbered_labelled_and_lettered_lines():
    body = "The parties agree to the terms below.\n"
    lines = ["1. DEFINITIONS", "1.1 \u201cAffiliate\u201d means any entity.", "  (a) The Licensee shall pay.",
             "(iv) Fees are due.", "ARTICLE IV", "Section 4. Term", "\u00a7 12 Notices",
             "12.3.1 Notice is given in writing.", "\x0c2. PAYMENT"]  # fmt: skip
    source = "AGREEMENT\n" + "".join(line + "\n" + body for line in lines)
    sections, clauses = structure_levels(source)
    assert [source[s : s + 8] for s in sections] == [
        "1. DEFIN",
        "ARTICLE ",
        "Section ",
        "\u00a7 12 Not",
        "2. PAYME",
    ]
    assert [source[s : s + 8] for s in clauses] == ["1.1 \u201cAff", "(a) The ", "(iv) Fee", "12.3.1 N"]
    assert structure_starts(source) == sorted(sections + clauses)


def test_a_start_right_under_a_heading_is_not_a_cut():
    source = "Recitals of the parties.\n\nARTICLE II  DUTIES OF AGENT\n\nSection 2.01 Orders. Text.\n(a) Sub."
    sections, clauses = structure_levels(source)
    assert [source[s : s + 7] for s in sections] == ["ARTICLE"]  # not "Section 2.01" under it
    assert clauses == []  # nor "(a)", under the short line that starts "Section 2.01"
    long_line = source.replace("Orders. Text.", "Orders. " + "Text " * 30 + "ends.")
    assert [long_line[s : s + 3] for s in structure_levels(long_line)[1]] == ["(a)"]


@pytest.mark.parametrize(
    "line",
    [
        "Section 4 of this Agreement applies",  # a wrapped sentence, not a heading
        "30 days after notice",  # a number wrapped onto a line
        "1.5 million dollars",
        "words then (a) inline clause",
        "$1. Price",
    ],
)
def test_body_text_is_not_a_structure_start(line):
    assert structure_starts(f"The parties agree that\n{line} and more.") == []


def test_headings_the_extractor_found_are_starts_when_they_begin_a_line():
    source = "Preamble text here.\n\n  Term and Termination\nThe term is ten years. Inline Heading here."
    heading = source.index("Term and")
    inline = source.index("Inline")
    starts = structure_starts(source, [Heading("Term and Termination", heading), Heading("Inline", inline)])
    assert starts == [heading]


# ---------------------------------------------------------------- passages that follow it


def test_a_numbered_contracts_passages_start_at_section_starts():
    source, section_starts = numbered_contract(random.Random(7))
    assert max(b - a for a, b in itertools.pairwise(section_starts)) < 1000
    chunks = chunk_document(source, mode="adaptive", size=1000, overlap=100)
    check_chunks(source, chunks, 1000, 100)
    clause_or_section = set(structure_starts(source))
    assert all(c.start in clause_or_section for c in chunks)
    # Sections fit in the window, and a section start is preferred late in it: most passages hold
    # whole sections, and none shares text with the one before.
    assert sum(c.start in section_starts for c in chunks) >= len(chunks) // 2
    assert all(b.start >= a.end for a, b in itertools.pairwise(chunks))

    fixed = chunk_document(source, mode="fixed", size=1000, overlap=100)
    assert sum(c.start in section_starts for c in fixed) < sum(c.start in section_starts for c in chunks)


def test_a_section_longer_than_the_window_is_split_by_the_fixed_rules():
    rng = random.Random(9)
    long_section = "1. SCOPE\n\n" + sentences(rng, 40) + "\n\n"
    source = long_section + "2. PAYMENT\n\n" + sentences(rng, 3)
    chunks = chunk_document(source, mode="adaptive", size=500, overlap=50)
    check_chunks(source, chunks, 500, 50)
    inside = [c for c in chunks if c.end < len(long_section) - 2]
    assert len(inside) >= 3
    assert all(c.text.endswith(".") for c in inside)
    assert any(c.start == len(long_section) for c in chunks)  # the next section starts a passage


def test_a_document_without_structure_chunks_as_before():
    source = sentences(random.Random(3), 200).replace(". The", ".\n\nThe")
    assert structure_starts(source) == []
    for size, overlap in [(1000, 100), (400, 60)]:
        adaptive = chunk_document(source, mode="adaptive", size=size, overlap=overlap)
        assert adaptive == chunk_text(source, size=size, overlap=overlap)


def test_a_start_early_in_the_window_is_not_cut_at():
    # A clause start at 10% of the window would leave a tiny passage: the fixed rules decide.
    source = "Intro words here.\n(a) " + sentences(random.Random(4), 30)
    first = chunk_document(source, mode="adaptive", size=300, overlap=30)[0]
    assert first == chunk_text(source, size=300, overlap=30)[0]
    assert first.end > source.index("(a)")


def test_adaptive_passages_stay_within_the_models_reach():
    source, _ = numbered_contract(random.Random(11), sections=8)
    chunks = chunk_document(source, mode="adaptive", size=1000, overlap=100, readable=first_words(60))
    check_chunks(source, chunks, 1000, 100)
    assert all(len(c.text.split()) <= 60 for c in chunks)
    assert sum(c.start in set(structure_starts(source)) for c in chunks) > len(chunks) // 2


def test_section_titles_and_pages_are_kept():
    source, starts = numbered_contract(random.Random(12), sections=4)
    headings = [Heading(f"SECTION {n + 1} TITLE", s) for n, s in enumerate(starts)]
    for chunk in chunk_document(source, mode="adaptive", size=400, overlap=40, sections=headings):
        expected = [h.title for h in headings if h.start <= chunk.start][-1]
        assert chunk.section_title == expected


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="fixed, adaptive"):
        chunk_document("Some text.", mode="semantic")
