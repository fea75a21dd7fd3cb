"""chunk_text(): exact offsets, size/overlap guarantees, sentence and abbreviation handling, pages.

The guarantee tests take `chunker`: they run in both RAG_CHUNKING modes (structure.chunk_document).
"""

from __future__ import annotations

import functools
import glob
import itertools
import random
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rag.ingest import chunking
from rag.ingest.chunking import (
    ABBREVIATIONS,
    BLANK_CHARS,
    DEFAULT_OVERLAP,
    DEFAULT_SIZE,
    ChunkSpan,
    chunk_text,
    sentence_breaks,
    token_estimate,
)
from rag.ingest.structure import MODES, chunk_document

try:
    from rag.ingest.extract import PageSpan, SectionSpan
except ImportError:  # extract.py not written yet: structurally identical doubles

    @dataclass(frozen=True)
    class PageSpan:
        number: int
        start: int
        end: int

    @dataclass(frozen=True)
    class SectionSpan:
        title: str
        start: int


CUAD_DIR = Path("/work/shared/eval/legalbench-cuad/corpus/cuad")
CUAD_FULL_DIR = Path("/work/shared/eval/cuad-full-corpus/cuad")
BLANK = frozenset(BLANK_CHARS)


# Section and clause starts on lines of their own, for the random texts: adaptive mode cuts at them.
STRUCTURE_PIECES = [
    "\n1.1 The",
    "\n(b) Each",
    "\nARTICLE IV",
    "\nSection 4 Term",
    "\n\n2. Payment",
    "\r\n(iv) Fees",
]


@pytest.fixture(params=MODES)
def chunker(request):
    """chunk_text in each RAG_CHUNKING mode ("fixed", "adaptive")."""
    return functools.partial(chunk_document, mode=request.param)


def is_blank_at(source: str, pos: int) -> bool:
    """Whether source[pos] is blank, or pos is outside the text (a boundary)."""
    return pos < 0 or pos >= len(source) or source[pos] in BLANK


def check_chunks(source: str, chunks: list[ChunkSpan], size: int, overlap: int) -> None:
    """The guarantees in chunking's module docstring."""
    covered = bytearray(len(source))
    for i, chunk in enumerate(chunks):
        assert chunk.index == i
        assert chunk.text == source[chunk.start : chunk.end]
        assert 0 < len(chunk.text) <= size
        assert chunk.text[0] not in BLANK and chunk.text[-1] not in BLANK, chunk
        hard_end = not is_blank_at(source, chunk.end)
        if hard_end:  # only a word longer than the window is cut
            assert len(chunk.text) == size and not BLANK.intersection(chunk.text), chunk
        if not is_blank_at(source, chunk.start - 1):  # only the rest of a hard-cut word starts mid-word
            assert i > 0 and chunks[i - 1].end == chunk.start, chunk
            assert not BLANK.intersection(chunks[i - 1].text)
        covered[chunk.start : chunk.end] = b"\x01" * len(chunk.text)
    for prev, nxt in itertools.pairwise(chunks):
        assert nxt.start > prev.start and nxt.end > prev.end
        assert prev.end - nxt.start <= overlap
        if nxt.start >= prev.end:  # no shared text: nothing but blanks between them
            assert not source[prev.end : nxt.start].strip(BLANK_CHARS)
    missed = [i for i, c in enumerate(source) if not covered[i] and c not in BLANK]
    assert not missed, f"{len(missed)} non-blank characters in no chunk, first at {missed[0]}"


def sentences(rng: random.Random, n: int) -> str:
    words = ["the", "party", "shall", "deliver", "notice", "within", "thirty", "days", "of", "any", "breach"]
    out = []
    for _ in range(n):
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(6, 18)))
        out.append(sentence[0].upper() + sentence[1:] + ".")
    return " ".join(out)


# ---------------------------------------------------------------- config and trivial input


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (49, 0, "at least 50"),
        (0, 0, "at least 50"),
        (100, -1, "overlap"),
        (100, 100, "overlap"),
        (100, 150, "overlap"),
        (100.0, 10, "integer"),
        ("1000", 10, "integer"),
        (100, True, "integer"),
        (100, None, "integer"),
    ],
)
def test_invalid_config(size, overlap, message):
    with pytest.raises(ValueError, match=message):
        chunk_text("Some text.", size=size, overlap=overlap)


def test_invalid_config_is_refused_even_for_empty_text():
    with pytest.raises(ValueError):
        chunk_text("", size=10)


@pytest.mark.parametrize("source", ["", " ", "\r\n\r\n\t  \x0c", "\ufeff", "\ufeff\r\n \u00a0\u200b"])
def test_blank_text_has_no_chunks(source):
    assert chunk_text(source) == []


def test_defaults_follow_the_spec():
    assert (DEFAULT_SIZE, DEFAULT_OVERLAP) == (1000, 100)


def test_short_text_is_one_trimmed_chunk():
    source = "\n\n  A short agreement.  \n"
    (chunk,) = chunk_text(source)
    assert chunk == ChunkSpan(
        index=0,
        start=4,
        end=len(source) - 3,
        page_start=1,
        page_end=1,
        section_title="",
        text="A short agreement.",
    )


def test_token_estimate_is_cheap_and_sane():
    assert token_estimate("") == 0
    assert token_estimate("one two three four five six seven eight nine ten") == 13
    assert 150 <= token_estimate(sentences(random.Random(1), 12)) <= 400


# ---------------------------------------------------------------- boundaries


def test_chunks_end_at_sentence_ends_when_the_window_has_one(chunker):
    source = sentences(random.Random(3), 200)
    chunks = chunker(source, size=400, overlap=60)
    check_chunks(source, chunks, 400, 60)
    assert len(chunks) > 20
    for chunk in chunks[:-1]:
        assert chunk.text.endswith("."), chunk.text[-40:]
        assert len(chunk.text) >= 400 * 0.7 - 1  # the sentence end is looked for in the last 30%


def test_paragraph_break_beats_a_later_sentence_end():
    first = "A" + " word" * 150 + " first paragraph ends here."  # ~780 chars
    source = first + "\n\nSecond paragraph. It has sentences. " + "More text. " * 30
    chunk = chunk_text(source)[0]
    assert chunk.end == len(first)


def test_no_break_after_a_heading():
    body = "The term is " + "ten " * 185 + "years."  # 758 chars: in the last 30% of the window
    source = body + "\n\nARTICLE 5 PAYMENT\n\nFees are due monthly. " + "Each invoice is due. " * 20
    chunk = chunk_text(source)[0]
    assert chunk.text.endswith("years.")


def test_semicolon_when_no_sentence_end():
    source = "Licensee shall " + "pay " * 190 + "the fees; provided that " + "no " * 100 + "fee is due."
    chunk = chunk_text(source)[0]
    assert chunk.text.endswith("fees;")


def test_plain_text_without_punctuation_ends_at_a_word(chunker):
    rng = random.Random(5)
    source = " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "epsilon"]) for _ in range(2000))
    chunks = chunker(source, size=300, overlap=40)
    check_chunks(source, chunks, 300, 40)
    assert all(len(c.text) > 280 for c in chunks[:-1])


@pytest.mark.parametrize(
    "abbreviation", ["Sec.", "No.", "Inc.", "Corp.", "Co.", "Ltd.", "U.S.", "v.", "Art.", "et al.", "J."]
)
def test_abbreviations_are_not_sentence_ends(abbreviation):
    # A real sentence end at ~72% of the window, then the abbreviation at ~90%, followed by a
    # capitalised word so that only the abbreviation list can tell it apart from a sentence end.
    head = "Recitals " + "x" * 56 + " agreed."  # 73 chars: the real sentence end, in the last 30%
    source = head + " See Acme " + abbreviation + " Holdings And Partners Worldwide Limited Beyond It"
    assert source.index(abbreviation) == 83
    chunk = chunk_text(source, size=100, overlap=10)[0]
    assert chunk.text == head, chunk.text

    control = source.replace(abbreviation, "Done.")
    assert chunk_text(control, size=100, overlap=10)[0].text.endswith("Done.")


def test_every_listed_abbreviation_is_lower_case_with_a_period():
    assert all(a == a.lower() and a.endswith(".") for a in ABBREVIATIONS)
    for required in [
        "sec.",
        "no.",
        "inc.",
        "corp.",
        "co.",
        "ltd.",
        "u.s.",
        "v.",
        "e.g.",
        "i.e.",
        "al.",
        "art.",
    ]:
        assert required in ABBREVIATIONS


def test_lower_case_after_a_period_is_not_a_sentence_end():
    head = "Recitals " + "x" * 56 + " agreed."
    source = head + " Filler words resp. the other words of this clause and beyond the window here"
    assert chunk_text(source, size=100, overlap=10)[0].text == head


def test_section_sign_stays_with_its_number():
    # Without punctuation the cut is the last blank in the window; here that blank follows "§".
    words = "word " * 11  # 55 chars
    source = words + "under \u00a7 12 of the code and more words after it"
    assert source.index("\u00a7") == 61
    chunk = chunk_text(source, size=62, overlap=0)[0]
    assert not chunk.text.endswith("\u00a7")
    assert chunk.text.endswith("under")


def test_a_word_longer_than_the_window_is_cut_hard(chunker):
    url = "https://example.com/" + "a" * 2480
    source = "See " + url + " for the terms. " + "_" * 130 + " Signed."
    chunks = chunker(source, size=1000, overlap=100)
    check_chunks(source, chunks, 1000, 100)
    assert chunks[0].text == "See"
    assert [len(c.text) for c in chunks[1:3]] == [1000, 1000]
    assert "".join(c.text for c in chunks[1:4]).startswith(url)
    assert chunks[-1].text.endswith("Signed.")


def test_sentence_breaks_use_the_chunking_rules():
    source = (
        "ARTICLE 5 TERM\n\nAcme Inc. Holdings and U.S. Steel agree, e.g. to this (see Sec. 2). "
        "John A. Smith signs.\r\n1. First item.\r\n2. Second item!\u201d Then?  yes. End."
    )
    runs = [source[cut:after] for cut, after in sentence_breaks(source)]
    assert runs == ["\n\n", " ", "\r\n", "\r\n", " ", " "]
    ends = [source[cut - 6 : cut] for cut, _ in sentence_breaks(source)]
    # Not after "Inc.", "U.S.", "e.g.", "Sec.", "A.", "1.", nor "Then?" before a lower-case word.
    assert ends == ["5 TERM", "c. 2).", "signs.", " item.", "item!\u201d", "  yes."]


@pytest.mark.parametrize("source", ["", "   ", "One sentence.", "  Leading and trailing.  \n\n", "A.\n\n"])
def test_no_sentence_breaks_at_the_edges(source):
    assert list(sentence_breaks(source)) == []


def test_sentence_breaks_are_every_sentence_or_paragraph_boundary():
    # sentence_breaks() only looks at likely runs, for speed: it must find what a check of every
    # blank run finds.
    def every_run(source: str) -> list[tuple[int, int]]:
        breaks = []
        for run in chunking._BLANK_RUN.finditer(source):
            cut, after = run.span()
            if cut > 0 and after < len(source):
                level = chunking._boundary_level(source, cut, after)
                if level >= chunking._SENTENCE or chunking._is_paragraph_break(source[cut:after]):
                    breaks.append((cut, after))
        return breaks

    rng = random.Random(41)
    pieces = ["word", "Agreement", "Inc.", "U.S.", "e.g.", "1.", "end.", "why?", "yes!",
              "clause;", "\u00a7", " ", "  ", "\n", "\r\n", "\n\n", "\r\r", "\t", "\x0c",
              "\u00a0", "\ufeff", "\u200b", "\u2028", "\u2029", ". ", "(a)",
              "\u201cquoted.\u201d", ")", "]", "'", '"', "x.)", "ARTICLE 5", "the"]  # fmt: skip
    for _ in range(3000):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        assert list(sentence_breaks(source)) == every_run(source), repr(source)


# ---------------------------------------------------------------- overlap


def test_overlap_is_close_to_the_configured_overlap(chunker):
    source = sentences(random.Random(11), 300)
    for size, overlap in [(1000, 100), (500, 100), (200, 0), (300, 150)]:
        chunks = chunker(source, size=size, overlap=overlap)
        check_chunks(source, chunks, size, overlap)
        longest_word = max(map(len, source.split()))
        for prev, nxt in itertools.pairwise(chunks):
            shared = prev.end - nxt.start
            if overlap == 0:
                assert shared < 0  # starts at the next word after the previous end
            else:
                assert overlap - max(overlap // 2, longest_word + 1) <= shared <= overlap


def test_next_chunk_prefers_a_sentence_start_in_the_overlap():
    source = sentences(random.Random(13), 300)
    chunks = chunk_text(source, size=600, overlap=120)
    at_sentence_start = 0
    for prev, nxt in itertools.pairwise(chunks):
        region = source[prev.end - 120 : prev.end - 60]
        if ". " in region[:-2]:
            assert source[nxt.start - 2] == ".", source[nxt.start - 20 : nxt.start + 20]
            at_sentence_start += 1
    assert at_sentence_start > 5


def test_overlap_never_starts_mid_word(chunker):
    source = ("Indemnification obligations survive termination " * 80).strip()
    chunks = chunker(source, size=200, overlap=37)
    check_chunks(source, chunks, 200, 37)
    assert all(source[c.start - 1] == " " for c in chunks[1:])


# ---------------------------------------------------------------- line endings, BOM, pages, sections


def test_crlf_text_with_a_bom(chunker):
    body = sentences(random.Random(17), 80).replace(". ", ".\r\n").replace("shall ", "shall\r\n\r\n", 5)
    source = "\ufeff" + body + "\r\n"
    chunks = chunker(source, size=500, overlap=50)
    check_chunks(source, chunks, 500, 50)
    assert chunks[0].start == 1
    assert all("\r" not in (c.text[0], c.text[-1]) for c in chunks)
    assert all(c.text.endswith(".") for c in chunks[:-1])


def test_pages_and_sections(chunker):
    rng = random.Random(19)
    page1 = "ARTICLE 1 DEFINITIONS\n\n" + sentences(rng, 30)
    page2 = "ARTICLE 2 TERM\n\n" + sentences(rng, 30)
    page3 = sentences(rng, 5)
    source = page1 + "\x0c" + page2 + "\x0c" + page3
    p2 = len(page1) + 1
    p3 = p2 + len(page2) + 1
    pages = [PageSpan(number=3, start=p3, end=len(source)), PageSpan(1, 0, p2), PageSpan(2, p2, p3)]
    sections = [SectionSpan(title="ARTICLE 1 DEFINITIONS", start=0), SectionSpan("ARTICLE 2 TERM", p2)]
    chunks = chunker(source, size=500, overlap=50, pages=pages, sections=sections)
    check_chunks(source, chunks, 500, 50)

    for chunk in chunks:
        first_page = 1 if chunk.start < p2 else 2 if chunk.start < p3 else 3
        last_page = 1 if chunk.end - 1 < p2 else 2 if chunk.end - 1 < p3 else 3
        assert (chunk.page_start, chunk.page_end) == (first_page, last_page)
        assert chunk.section_title == ("ARTICLE 1 DEFINITIONS" if chunk.start < p2 else "ARTICLE 2 TERM")
    assert any(c.page_start == c.page_end == 2 for c in chunks)
    assert any((c.page_start, c.page_end) == (2, 3) for c in chunks) or any(
        (c.page_start, c.page_end) == (1, 2) for c in chunks
    )


def test_a_chunk_spanning_two_pages():
    source = "First page text ends here.\x0cSecond page text begins here."
    split = source.index("\x0c") + 1
    (chunk,) = chunk_text(source, pages=[PageSpan(1, 0, split), PageSpan(2, split, len(source))])
    assert (chunk.page_start, chunk.page_end) == (1, 2)
    (only_second,) = chunk_text(source[split:] + " ", pages=[PageSpan(2, 0, 40)])
    assert (only_second.page_start, only_second.page_end) == (2, 2)


def test_without_sections_the_title_is_empty_and_before_the_first_section_too():
    source = "Preamble text. " * 100
    chunks = chunk_text(source, size=300, overlap=30, sections=[SectionSpan("Later", 700)])
    assert chunks[0].section_title == ""
    assert chunks[-1].section_title == "Later"


# ---------------------------------------------------------------- robustness and real text


def test_random_texts_keep_every_guarantee(chunker):
    rng = random.Random(23)
    pieces = ["word", "Agreement", "Inc.", "U.S.", "e.g.", "1.", "end.", "why?", "yes!", "clause;", "\u00a7",
              "x" * 70, "_" * 140, " ", " ", " ", "  ", "\n", "\r\n", "\n\n", "\t", "\x0c", "\u00a0",
              "\ufeff", "\u200b", ". ", "(a)", "\u201cquoted.\u201d", *STRUCTURE_PIECES]  # fmt: skip
    for _ in range(300):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 400)))
        size = rng.randint(50, 400)
        overlap = rng.randint(0, size - 1)
        chunks = chunker(source, size=size, overlap=overlap)
        check_chunks(source, chunks, size, overlap)
        assert bool(chunks) == bool(source.strip(BLANK_CHARS))


@pytest.mark.skipif(not CUAD_DIR.is_dir(), reason="CUAD eval corpus not present")
def test_a_real_cuad_contract(chunker):
    path = CUAD_DIR / "ALCOSTORESINC_12_14_2005-EX-10.26-AGENCY AGREEMENT.txt"
    if not path.exists():
        path = sorted(CUAD_DIR.glob("*.txt"))[0]
    source = path.read_text(encoding="utf-8")
    chunks = chunker(source)
    check_chunks(source, chunks, DEFAULT_SIZE, DEFAULT_OVERLAP)
    assert len(chunks) > 10
    ends = sum(c.text[-1] in ".;:\"')" for c in chunks[:-1])
    assert ends / (len(chunks) - 1) > 0.6


@pytest.mark.slow
@pytest.mark.skipif(not CUAD_FULL_DIR.is_dir(), reason="full CUAD corpus not present")
def test_the_full_cuad_corpus_chunks_correctly(chunker):
    """Every CUAD contract chunks within bounds (the speed is bench/ingest.py's, not a timed test)."""
    texts = [Path(p).read_text(encoding="utf-8") for p in sorted(glob.glob(str(CUAD_FULL_DIR / "*.txt")))]
    results = [chunker(text) for text in texts]
    for text, chunks in zip(texts, results, strict=True):
        check_chunks(text, chunks, DEFAULT_SIZE, DEFAULT_OVERLAP)


# ---------------------------------------------------------------- the embedding model's window


def first_words(limit: int):
    """A stand-in for the model's reach: it reads the first `limit` words of a text."""

    def readable(text: str) -> int:
        ends = [m.end() for m in re.finditer(r"\S+", text)]
        return len(text) if len(ends) <= limit else ends[limit - 1]

    return readable


def test_a_chunk_ends_where_the_model_stops_reading(chunker):
    source = sentences(random.Random(5), 60)
    chunks = chunker(source, size=1000, overlap=100, readable=first_words(40))
    check_chunks(source, chunks, 1000, 100)
    assert all(len(c.text.split()) <= 40 for c in chunks)
    assert max(len(c.text.split()) for c in chunks) > 30  # cut near the reach, not far before it
    assert sum(c.text.endswith(".") for c in chunks[:-1]) / (len(chunks) - 1) > 0.6  # at sentence ends


def test_a_chunk_the_model_reads_whole_is_unchanged():
    source = sentences(random.Random(6), 60)
    assert chunk_text(source, readable=len) == chunk_text(source)


def test_random_texts_keep_every_guarantee_within_the_models_reach(chunker):
    rng = random.Random(29)
    pieces = ["word", "Inc.", "end.", "clause;", "x" * 70, "_" * 140, " ", "  ", "\n", "\n\n", ". ", "(a)"]
    pieces += STRUCTURE_PIECES
    for _ in range(200):
        source = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 400)))
        size = rng.randint(50, 400)
        overlap = rng.randint(0, size - 1)
        limit = rng.randint(1, 60)
        chunks = chunker(source, size=size, overlap=overlap, readable=first_words(limit))
        check_chunks(source, chunks, size, overlap)
        assert all(len(c.text.split()) <= limit or len(c.text.split()) == 1 for c in chunks)
