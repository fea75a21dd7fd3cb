"""Split extracted document text into overlapping, sentence-aware chunks with exact source offsets.

A chunk is a span of the stored text, never a rewritten copy: `text == source[start:end]`. Sizes are
in characters of that source text (spec: 1000 with 100 overlap, split at sentence boundaries).

Guarantees, for every chunk (tested):
- `0 < len(text) <= size`, and the text neither starts nor ends with a blank (whitespace, BOM or
  zero-width space);
- it starts at a word start and ends at a word end, unless a single word is longer than `size`
  (a long URL, a row of underscores): that word is cut hard every `size` characters;
- consecutive chunks: `next.start > prev.start`, `next.end > prev.end` and
  `prev.end - next.start <= overlap` (a negative value means no shared text);
- every non-blank character of the source lies in at least one chunk.

With `readable` (the ingest service passes the embedding model's reach), a chunk also never holds
more than the model reads: a passage longer than its window (all-MiniLM-L6-v2: 256 word pieces)
ends earlier, so no passage has a tail that is stored and cited but never embedded.

Where a chunk ends: in the last 30% of the `size` window (or of the part the model reads), the last
paragraph break (not the one right after a heading), else the last sentence end, else the last ";",
else the last line break; failing those, the last blank anywhere in the window. "Inc.", "No.",
"U.S.", "e.g." and other legal abbreviations, initials and list markers ("1." at the start of a
line) are not sentence ends, nor is a period followed by a lower-case word.

Where the next one starts: `overlap` characters before the previous end, moved forward to the next
word start; a sentence start in the first half of that overlap region is preferred.

With `prefer` (lists of sorted offsets where a passage should begin, strongest first: the section,
then the clause starts that structure.py finds), a chunk whose window holds such a start past its
first PREFER_MIN_FILL of `size` ends right before the last one of the strongest list that has one
there (at its blank run), and the next chunk begins exactly there, without overlap; elsewhere the
rules above apply unchanged, so without `prefer` nothing changes.

`sentence_breaks()` exposes the same sentence rules (plus every paragraph break) to other modules,
such as the snippet builder in rag.retrieval.snippets.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

DEFAULT_SIZE = 1000
DEFAULT_OVERLAP = 100
MIN_SIZE = 50
BOUNDARY_ZONE = 0.3  # preferred boundaries are looked for in the last 30% of the window
PREFER_MIN_FILL = 0.3  # a chunk ends before a structure start only past 30% of its window

# Characters a chunk never starts or ends with. str.isspace() whitespace, plus the BOM and
# zero-width space that editors and extractors leave in text.
BLANK_CHARS = "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + "\ufeff\u200b"
_BLANK = frozenset(BLANK_CHARS)
_BLANK_RUN = re.compile(r"[\s\ufeff\u200b]+")

ABBREVIATIONS = frozenset(
    {
        "sec.", "secs.", "no.", "nos.", "inc.", "corp.", "co.", "ltd.", "llc.", "l.l.c.", "l.p.",
        "u.s.", "u.s.a.", "u.k.", "v.", "vs.", "e.g.", "i.e.", "al.", "etc.", "art.", "arts.",
        "para.", "paras.", "ch.", "cl.", "pt.", "sch.", "ex.", "exh.", "subsec.", "reg.",
        "regs.", "cf.", "id.", "ibid.", "mr.", "mrs.", "ms.", "dr.", "st.", "jr.", "sr.", "esq.",
        "dept.", "assn.", "bros.", "approx.", "fig.", "p.", "pp.", "vol.", "ed.", "jan.", "feb.",
        "mar.", "apr.", "jun.", "jul.", "aug.", "sep.", "sept.", "oct.", "nov.", "dec.",
    }
)  # fmt: skip
_CLOSERS = "\"')]\u201d\u2019"
_OPENERS = "\"'([\u201c\u2018"
_LIST_MARKER = re.compile(r"\(?(?:\d{1,3}|[a-zA-Z]|[ivxlcdmIVXLCDM]{1,6})\)?(?:\.\d{1,3})*\.")
_HEADING_MAX = 100  # a short line ending in a letter or digit before a blank line is a heading
_PREFER_BLANK_REACH = 64  # longest blank run before a structure start looked through
_NO_BREAK_AFTER = frozenset("\u00a7\u00b6")  # "§ 12", "¶ 3": keep the sign with its number

# The blank runs that can be a sentence break (a superset, for speed): after a sentence-ending or
# closing character, or holding a line break.
_BREAK_CANDIDATE = re.compile(
    rf"(?<=[.?!{re.escape(_CLOSERS)}])[\s\ufeff\u200b]+|[\s\ufeff\u200b]*[\n\r\x0c\u2028\u2029][\s\ufeff\u200b]*"
)

# Boundary strength of a blank run, the cut being at the run's start.
_SPACE, _LINE, _CLAUSE, _SENTENCE, _PARAGRAPH = range(5)


class PageLike(Protocol):
    """What chunking needs of a page (extract.PageSpan): a 1-based number and [start, end) offsets."""

    @property
    def number(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


class SectionLike(Protocol):
    """What chunking needs of a section (extract.SectionSpan): its title and where its heading starts."""

    @property
    def title(self) -> str: ...
    @property
    def start(self) -> int: ...


@dataclass(frozen=True)
class ChunkSpan:
    index: int
    start: int  # offsets into the source text
    end: int
    page_start: int
    page_end: int
    section_title: str  # title of the last section starting at or before `start` ("" if none)
    text: str  # == source[start:end]


def token_estimate(text: str) -> int:
    """A cheap *estimate* of the token count (about 1.3 tokens per word), not a tokenizer's count."""
    return math.ceil(len(text.split()) * 1.3)


def validate_chunk_config(size: int, overlap: int) -> None:
    """Raise ValueError unless `size` and `overlap` make a usable configuration."""
    if isinstance(size, bool) or not isinstance(size, int):
        raise ValueError(f"chunk size must be an integer number of characters, not {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int):
        raise ValueError(f"chunk overlap must be an integer number of characters, not {overlap!r}")
    if size < MIN_SIZE:
        raise ValueError(f"chunk size must be at least {MIN_SIZE} characters, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"chunk overlap must be at least 0 and less than the size ({size}), got {overlap}")


def chunk_text(
    source: str,
    *,
    size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
    pages: Iterable[PageLike] = (),
    sections: Iterable[SectionLike] = (),
    readable: Callable[[str], int] | None = None,
    prefer: Sequence[Sequence[int]] = (),
    max_chunks: int | None = None,
) -> list[ChunkSpan]:
    """Chunks of `source` (see the module docstring for the rules); [] for blank text. With
    `max_chunks`, at most that many: the first ones, cut exactly as without it (the caller tells
    a text that makes more by getting max_chunks back from a limit of one more than it allows).

    `readable(text)` says how many leading characters of a chunk's text the embedding model reads
    (all of them, or fewer for a text longer than its window); a chunk it would not read whole is
    ended earlier, at the best boundary within what it reads. `prefer`: lists of sorted
    offsets of non-blank characters where a passage should begin, strongest first (the module
    docstring says how).
    """
    validate_chunk_config(size, overlap)
    if not isinstance(source, str):
        raise TypeError(f"chunk_text() needs a str, not {type(source).__name__}")
    text_start = len(source) - len(source.lstrip(BLANK_CHARS))
    text_end = len(source.rstrip(BLANK_CHARS))
    if text_start >= text_end:
        return []

    page_list = sorted(pages, key=lambda p: p.start)
    page_starts = [p.start for p in page_list]
    section_list = sorted(sections, key=lambda s: s.start)
    section_starts = [s.start for s in section_list]

    def page_at(pos: int) -> int:
        if not page_list:
            return 1
        return page_list[max(bisect_right(page_starts, pos) - 1, 0)].number

    def section_at(pos: int) -> str:
        i = bisect_right(section_starts, pos) - 1
        return section_list[i].title if i >= 0 else ""

    chunks: list[ChunkSpan] = []
    start, prev_end = text_start, -1
    while True:
        end = text_end if text_end - start <= size else _cut(source, start, size, prev_end, prefer)
        if readable is not None:
            end = _within_readable(source, start, end, prev_end, readable, prefer)
        if end <= prev_end:
            # Every cut in this window falls inside the previous chunk (only possible when the
            # overlap is most of the size): restart right after the previous chunk instead.
            start = _next_nonblank(source, prev_end)
            continue
        chunks.append(
            ChunkSpan(
                index=len(chunks),
                start=start,
                end=end,
                page_start=page_at(start),
                page_end=page_at(end - 1),
                section_title=section_at(start),
                text=source[start:end],
            )
        )
        if end >= text_end or len(chunks) == max_chunks:
            return chunks
        start, prev_end = _next_start(source, start, end, overlap, prefer), end


def _cut(source: str, start: int, size: int, prev_end: int, prefer: Sequence[Sequence[int]] = ()) -> int:
    """Where the chunk starting at `start` ends: a blank's position in (start, start + size]."""
    limit = start + size
    for starts in prefer:
        before_structure = _preferred_cut(source, start, size, prev_end, starts)
        if before_structure > 0:
            return before_structure
    zone = max(start + size - int(size * BOUNDARY_ZONE), prev_end + 1, start + 1)
    best, best_level = -1, _SPACE
    last_blank = -1
    for run in _BLANK_RUN.finditer(source, zone):
        cut = run.start()
        if cut > limit:
            break
        if cut == zone and source[cut - 1] in _BLANK:
            continue  # the run began before the zone
        last_blank = cut
        level = _boundary_level(source, cut, run.end())
        if level > _SPACE and level >= best_level:
            best, best_level = cut, level
    if best > 0:
        return best
    if last_blank > 0 and source[last_blank - 1] not in _NO_BREAK_AFTER:
        return last_blank
    # No blank in the boundary zone: the last blank anywhere in the window.
    for run in _BLANK_RUN.finditer(source, start + 1):
        cut = run.start()
        if cut > limit:
            break
        if cut > start and (source[cut - 1] not in _NO_BREAK_AFTER or last_blank < 0):
            last_blank = cut
    if last_blank > start:
        return last_blank
    return limit  # one word longer than the whole window: cut it hard


def _preferred_cut(source: str, start: int, size: int, prev_end: int, prefer: Sequence[int]) -> int:
    """The start of the blank run before the last `prefer` offset whose run starts in
    (start + PREFER_MIN_FILL * size, start + size] and after `prev_end`; -1 if there is none."""
    limit = start + size
    floor = max(start + int(size * PREFER_MIN_FILL), prev_end, start)
    lo = bisect_right(prefer, floor)
    hi = bisect_right(prefer, limit + _PREFER_BLANK_REACH)
    for i in range(hi - 1, lo - 1, -1):
        cut = _blank_run_start(source, prefer[i], floor)
        if floor < cut <= limit and cut < prefer[i]:  # a blank between: the chunk ends at a word end
            return cut
    return -1


def _blank_run_start(source: str, pos: int, floor: int) -> int:
    """Where the blank run ending at `pos` starts (`pos` itself if none precedes it), not below `floor`."""
    while pos > floor and source[pos - 1] in _BLANK:
        pos -= 1
    return pos


def _within_readable(
    source: str,
    start: int,
    end: int,
    prev_end: int,
    readable: Callable[[str], int],
    prefer: Sequence[Sequence[int]],
) -> int:
    """`end`, or an earlier cut when `readable` would not read all of source[start:end]."""
    read = readable(source[start:end])
    if read >= end - start:
        return end
    return _cut(source, start, max(read, 1), prev_end, prefer)


def _next_start(source: str, start: int, end: int, overlap: int, prefer: Sequence[Sequence[int]] = ()) -> int:
    """Where the chunk after [start, end) starts: a `prefer` offset right after `end` (only blanks
    between), else a word start in [end - overlap, end), else the first non-blank at or after
    `end`. Always > start."""
    following = _next_nonblank(source, end)
    for starts in prefer:
        i = bisect_right(starts, following) - 1
        if i >= 0 and starts[i] == following:
            return following
    target = max(end - overlap, start + 1)
    if overlap == 0 or target >= end:
        return _next_nonblank(source, end)
    first_word = -1
    for run in _BLANK_RUN.finditer(source, target - 1, end):
        word = run.end()
        if word < target:
            continue
        if word >= end:
            break
        if first_word < 0:
            first_word = word
        if word - target > overlap // 2:
            break
        run_start = run.start()
        while run_start > start and source[run_start - 1] in _BLANK:
            run_start -= 1
        if _boundary_level(source, run_start, word) >= _SENTENCE:
            return word
    if first_word >= 0:
        return first_word
    return _next_nonblank(source, end)


def sentence_breaks(source: str) -> Iterator[tuple[int, int]]:
    """The blank runs `(cut, after)` of `source` that separate two sentences, in order.

    A run separates sentences when it follows ".", "?" or "!" (closing quotes and brackets allowed in
    between) that is no abbreviation, initial or list marker and is not followed by a lower-case
    word, or when it is a paragraph break (a blank line, a form feed), headings included. These are
    the sentence rules `chunk_text` cuts at. Leading and trailing blanks are not breaks.
    """
    for run in _BREAK_CANDIDATE.finditer(source):
        cut, after = run.span()
        if cut == 0 or after == len(source):
            continue
        if _is_paragraph_break(source[cut:after]) or _boundary_level(source, cut, after) >= _SENTENCE:
            yield cut, after


def _next_nonblank(source: str, pos: int) -> int:
    run = _BLANK_RUN.match(source, pos)
    return run.end() if run else pos


def _boundary_level(source: str, cut: int, after: int) -> int:
    """How good a place to end a chunk is the blank run source[cut:after] (cut > 0)."""
    run = source[cut:after]
    if _is_paragraph_break(run):
        if source[cut - 1].isalnum() and _line_length(source, cut) <= _HEADING_MAX:
            return _LINE  # after a heading ("ARTICLE 5 TERM"): the break before it is better
        return _PARAGRAPH
    level = _LINE if _line_breaks(run) else _SPACE
    i = cut - 1
    while i > cut - 4 and i > 0 and source[i] in _CLOSERS:
        i -= 1
    char = source[i]
    if char in ".?!":
        if after < len(source) and source[after].islower():
            return level  # "e.g. the", "approx. ten": not a sentence end
        if char != "." or not _is_abbreviation(source, i):
            return _SENTENCE
    elif char == ";":
        return _CLAUSE
    return level


def _line_breaks(run: str) -> int:
    """How many line breaks a blank run holds ("\r\n" counts once)."""
    return (run.count("\n") if "\n" in run else run.count("\r")) + run.count("\u2028")


def _is_paragraph_break(run: str) -> bool:
    """Whether a blank run is a paragraph break: a blank line, a form feed or U+2029."""
    return _line_breaks(run) >= 2 or "\x0c" in run or "\u2029" in run


def _line_length(source: str, end: int) -> int:
    """Length of the line ending at `end`, up to _HEADING_MAX + 1."""
    lo = max(end - _HEADING_MAX - 1, 0)
    line_start = max(source.rfind("\n", lo, end), source.rfind("\r", lo, end)) + 1
    return end - (line_start if line_start > 0 or lo == 0 else lo)


def _is_abbreviation(source: str, period: int) -> bool:
    """Whether the period at source[period] ends an abbreviation, an initial or a list marker."""
    word_start = period
    while word_start > 0 and period - word_start < 16 and source[word_start - 1] not in _BLANK:
        word_start -= 1
    word = source[word_start : period + 1].lstrip(_OPENERS)
    if word.lower() in ABBREVIATIONS:
        return True
    if len(word) == 2 and word[0].isalpha() and word[0].isupper():
        return True  # an initial: "John A. Smith", "Exhibit A." is the price of that
    if _LIST_MARKER.fullmatch(word):
        line_start = word_start
        while line_start > 0 and source[line_start - 1] in " \t":
            line_start -= 1
        return line_start == 0 or source[line_start - 1] in "\n\r\x0c"
    return False
