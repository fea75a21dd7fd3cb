"""Best-effort heading detection on plain lines (PDF and TXT, and DOCX without heading styles).

Cheap on purpose: one regex pass over line starts, no layout analysis. Lines that look like
"ARTICLE 5", "Section 10. Term", "1. DEFINITIONS", "2.1 Late Payment" or a short ALL-CAPS line
("IN WITNESS WHEREOF") become sections. Wrapped body lines that merely start with "Section 4 of"
are skipped because a heading's words are capitalised.
"""

from __future__ import annotations

import re

from rag.ingest.extract.document import SectionSpan

MAX_SECTIONS = 2000
MAX_HEADING_CHARS = 120  # a longer line is body text (or a heading run into its paragraph)
MAX_TITLE_WORDS = 10

_LINE = re.compile(r"[^\r\n]+")
_LABELLED = re.compile(
    r"(?:(?:ARTICLE|Article|SECTION|Section|SCHEDULE|Schedule|EXHIBIT|Exhibit|ANNEX|Annex|APPENDIX"
    r"|Appendix|PART|Part)\s+|§\s*)(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])\b\.?(?P<rest>.*)"
)
_NUMBERED = re.compile(r"\d{1,3}(?:\.\d{1,3})*\.?\s+(?P<rest>.+)")
_MINOR_WORDS = frozenset("a an and as at by for in of on or the to with".split())  # noqa: SIM905


def _title_like(words: str) -> bool:
    """A short run of capitalised words ("Term and Termination") or an ALL-CAPS phrase."""
    tokens = words.split()
    if not tokens or len(tokens) > MAX_TITLE_WORDS:
        return False
    if words.isupper():
        return True
    return tokens[0][0].isupper() and all(t[0].isupper() or t in _MINOR_WORDS or t == "&" for t in tokens)


def _heading_part(rest: str) -> str | None:
    """What follows a label or number, cut at the end of its first phrase; None if it is prose."""
    rest = rest.strip(" \t.:-\u2013\u2014")
    if not rest:
        return ""
    head = re.split(r"[.:;]\s|[.:;]$", rest, maxsplit=1)[0]
    return head if _title_like(head) else None


def _caps_line(line: str) -> bool:
    letters = sum(ch.isalpha() for ch in line)
    return (
        letters >= 3
        and line.isupper()
        and letters * 2 >= len(line.replace(" ", ""))
        and len(line.split()) <= MAX_TITLE_WORDS
        and not line.endswith((",", ";", "-"))
    )


def _heading_title(line: str) -> str | None:
    for pattern, bare_label_ok in ((_LABELLED, True), (_NUMBERED, False)):
        match = pattern.fullmatch(line)
        if not match:
            continue
        # "Section 4 of this Agreement ..." is a wrapped sentence, not a heading; a bare number is not one.
        head = _heading_part(match["rest"])
        if head is None or (not head and not bare_label_ok):
            return None
        if not head:
            return line[: match.start("rest")].strip()
        return line[: match.start("rest") + match["rest"].find(head) + len(head)]
    return line if _caps_line(line) else None


def find_headings(text: str) -> list[SectionSpan]:
    """Sections for lines of `text` that look like headings, in order, at most MAX_SECTIONS."""
    sections: list[SectionSpan] = []
    for match in _LINE.finditer(text):
        line = match.group()
        stripped = line.strip()
        if not stripped or len(stripped) > MAX_HEADING_CHARS * 4:
            continue
        title = _heading_title(stripped)
        if title:
            start = match.start() + (len(line) - len(line.lstrip()))
            sections.append(SectionSpan(title=title[:MAX_HEADING_CHARS].rstrip(), start=start))
            if len(sections) >= MAX_SECTIONS:
                break
    return sections
