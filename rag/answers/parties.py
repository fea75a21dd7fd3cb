"""Where a contract names its parties: the preamble's sentence ("This Agreement is made as of … by
and between Alpha Foods Inc., a Delaware corporation ("Alpha"), and Northwind LLC ("Distributor")")
or a title line ("DISTRIBUTOR AGREEMENT BETWEEN INGRAM MICRO AND NETGEAR").

Searched for, "the parties" finds boilerplate ("the entire agreement of the parties"); the
preamble is found by its place and shape instead: the first "between" / "among" of the opening
that follows words making the agreement ("Agreement", "made", "entered into", "dated").
"""

from __future__ import annotations

import re

OPENING_CHARS = 6000  # the preamble is in the document's first pages
MAX_SENTENCE_CHARS = 700  # a preamble listing addresses runs long; the quote stops here
_BETWEEN = re.compile(r"\b(?:by\s+and\s+)?(?:between|among)\b", re.I)
_MAKING = re.compile(r"\b(?:agreement|contract|made|entered|dated|executed|effective|concluded)\b", re.I)
# Where the sentence starts: after the previous sentence's end or a blank line; where it ends: a
# full stop before a word starting a sentence, not after an abbreviation ("Inc. (\"Alpha\")", "Mt.
# Kemble Ave", "e.l.f. Beauty" go on).
_SENTENCE_START = re.compile(r"[.;:]\s+(?=[A-Z\"“(])|\n\s*\n")
_SENTENCE_END = re.compile(
    r"(?:(?<=[A-Za-z]{4})|(?<=[)\"”\d]))[.;]\s+(?=[A-Z][a-z]|[A-Z]{3,}|[\"“][A-Z])|\n\s*\n"
)
_LOOK_BACK = 400


def parties_span(text: str) -> tuple[int, int] | None:
    """The (start, end) of the sentence of `text` that names its parties, or None."""
    opening = text[:OPENING_CHARS]
    for m in _BETWEEN.finditer(opening):
        start = _sentence_start(opening, m.start())
        if not _MAKING.search(opening, start, m.start()):
            continue  # "... between the Company and the Trust" inside a recital, not the preamble
        end = _sentence_end(text, m.end(), start + MAX_SENTENCE_CHARS)
        return start, end
    return None


def _sentence_start(text: str, at: int) -> int:
    floor = max(0, at - _LOOK_BACK)
    ends = list(_SENTENCE_START.finditer(text, floor, at))
    start = ends[-1].end() if ends else floor
    return start + len(text[start:at]) - len(text[start:at].lstrip())


def _sentence_end(text: str, after: int, limit: int) -> int:
    found = _SENTENCE_END.search(text, after, min(limit, len(text)))
    end = found.start() + 1 if found else min(limit, len(text))
    return len(text[:end].rstrip())
