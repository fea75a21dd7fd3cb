"""Adaptive chunking: passages that follow a document's own structure (RAG_CHUNKING=adaptive).

A contract has numbered sections ("1.", "1.1", "Section 4", "ARTICLE IV"), lettered clauses
("(a)", "(iv)") and headings. `structure_levels()` finds where each begins: such a marker at the
start of a line, or a heading the extractor recorded as a section. `chunk_document()` hands those
offsets to `chunking.chunk_text(prefer=...)`, which ends a passage right before the last section
start its window holds (else the last clause start) and starts the next passage there, within the
same size, overlap and embedding-window bounds and with the same guarantees (chunking's
docstring). A start right under a section's heading line is not a cut: the heading stays with its
text. A text without structure chunks exactly as in `fixed` mode.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from .chunking import BLANK_CHARS, ChunkSpan, SectionLike, chunk_text

FIXED, ADAPTIVE = "fixed", "adaptive"
MODES = (FIXED, ADAPTIVE)
_HEADING_MAX = 100  # a section line no longer than this, with another start under it, is a heading
_LINE_BREAKS = "\n\r\x0c\u2028\u2029"

# A section or clause marker at a line start (indentation allowed), followed by a capitalised word,
# a bracket or quote (or the line's end for a labelled one): "Section 4 of this Agreement ..."
# wrapped onto a new line is body text, "1.1 This Agreement" is a clause.
_TITLE_NEXT = r"""(?=[ \t]+[A-Z("'\u201c]|[ \t]*(?:\r?\n|$))"""
_STRUCTURE_START = re.compile(
    r"(?:^|(?<=[\r\x0c\u2028\u2029]))[ \t]*(?:(?P<section>"
    r"(?:ARTICLE|Article|SECTION|Section|CLAUSE|Clause|\u00a7)[ \t]*"
    r"(?:\d{1,3}(?:\.\d{1,3})*|[IVXLC]{1,7})\b[.:)]?"
    + _TITLE_NEXT
    + r"|\d{1,3}\."
    + _TITLE_NEXT
    + r")|(?P<clause>\d{1,3}(?:\.\d{1,3})+\.?"
    + _TITLE_NEXT
    + r"|\((?:[a-z]{1,2}|[ivxlc]{1,6}|\d{1,3}|[A-Z])\)(?=[ \t]+\S)))",
    re.MULTILINE,
)


def structure_levels(source: str, sections: Iterable[SectionLike] = ()) -> tuple[list[int], list[int]]:
    """Sorted offsets in `source` where a section begins ("1.", "Section 4", "ARTICLE IV", or a
    heading the extractor recorded at a line start), then where a clause begins ("1.1", "(a)")."""
    section_starts: set[int] = set()
    clause_starts: set[int] = set()
    for match in _STRUCTURE_START.finditer(source):
        if match["section"]:
            section_starts.add(match.start("section"))
        else:
            clause_starts.add(match.start("clause"))
    for section in sections:
        pos = section.start
        if not 0 < pos < len(source) or source[pos] in BLANK_CHARS:
            continue
        line_start = _back_over(source, pos, " \t")
        if line_start == 0 or source[line_start - 1] in _LINE_BREAKS:
            section_starts.add(pos)
    clause_starts -= section_starts
    # A start right under a section's heading line ("ARTICLE II DUTIES" then "Section 2.01 ...")
    # belongs with it: cutting there would end a passage with the bare heading.
    under_heading = {
        pos for pos in section_starts | clause_starts if _heading_above(source, pos, section_starts)
    }
    return sorted(section_starts - under_heading), sorted(clause_starts - under_heading)


def _heading_above(source: str, pos: int, section_starts: set[int]) -> bool:
    """Whether the non-blank line above `pos` is a short line (a heading) starting a section."""
    above_end = _back_over(source, pos, BLANK_CHARS)
    if above_end == 0:
        return False
    above_start = above_end
    while (
        above_start > 0
        and above_end - above_start <= _HEADING_MAX
        and source[above_start - 1] not in _LINE_BREAKS
    ):
        above_start -= 1
    above_start = _forward_over(source, above_start, " \t")
    return above_start in section_starts and above_end - above_start <= _HEADING_MAX


def _back_over(source: str, pos: int, chars: str) -> int:
    """The smallest i <= pos with source[i:pos] made only of `chars` (no prefix copy: starts are many)."""
    while pos > 0 and source[pos - 1] in chars:
        pos -= 1
    return pos


def _forward_over(source: str, pos: int, chars: str) -> int:
    while pos < len(source) and source[pos] in chars:
        pos += 1
    return pos


def structure_starts(source: str, sections: Iterable[SectionLike] = ()) -> list[int]:
    """Every offset where a section, clause or heading begins (a non-blank at a line start), sorted."""
    return sorted(itertools.chain(*structure_levels(source, sections)))


def chunk_document(
    source: str, *, mode: str = FIXED, sections: Iterable[SectionLike] = (), **options
) -> list[ChunkSpan]:
    """`chunk_text(source, **options)` in the given RAG_CHUNKING `mode`: `fixed` (size, sentence
    and paragraph rules only) or `adaptive` (section and clause starts preferred)."""
    if mode not in MODES:
        raise ValueError(f"chunking mode must be one of {', '.join(MODES)}, not {mode!r}")
    sections = list(sections)
    prefer = structure_levels(source, sections) if mode == ADAPTIVE else ()
    return chunk_text(source, sections=sections, prefer=prefer, **options)
