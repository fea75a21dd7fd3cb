"""The document-type heading of a contract's opening: "SPONSORSHIP AGREEMENT",
"AMENDMENT NO. 3 TO WIRELESS CONTENT LICENSE AGREEMENT", or, when it is not in capitals, a
title-case heading before the preamble ("Sponsorship Agreement THIS AGREEMENT made ...") or the
preamble's own "This Reseller Agreement (...)"."""

from __future__ import annotations

import re

from .casing import is_upper, recase
from .words import LEGAL_SUFFIXES, SECONDARY_WORDS, TERMINAL_WORDS, bare, word_set

# Where a capitals run stops being a heading: "... AGREEMENT BETWEEN X AND Y", "... DATED AS OF".
_STOP = word_set("BETWEEN AMONG BY DATED MADE IS ENTERED EFFECTIVE WHEREAS AS THIS FOR WITH REGARDING")
# Words of filing notices ("CONFIDENTIAL TREATMENT REQUESTED ..."): a heading starts after them.
_NOTICE = word_set(
    """CONFIDENTIAL OMITTED PORTIONS REQUESTED SECURITIES COMMISSION REDACTED DISCLOSED MATERIAL EXCLUDED
    HARM TREATMENT FILED DENOTES INDICATES HERETO HEREIN"""
)
_NUMBERED = word_set("AMENDMENT ADDENDUM SUPPLEMENT SCHEDULE NO")
# Filing furniture around a heading: exhibit numbers, "EXECUTION COPY", bracketed notes, rules.
_FURNITURE = re.compile(
    r"\b(?:exhibit|ex|attachment|annex|appendix|schedule)\b\.?\s*(?:[a-z]\b|[\w.()/-]*\d[\w.()/-]*)"
    r"|\b(?:execution|final)\s+(?:copy|version)\b|\bdraft\b|\[[^\]]{0,80}\]"
    r"|\bsource:.{0,80}?\d{4}\b|\bpage\s+\d+\s+of\s+\d+|[-_=*]{3,}",
    re.I,
)
_MAX_WORDS = 10
_EXTENSION = 5  # words after AGREEMENT that still belong: "AND RIGHT OF FIRST OFFER", "AMENDMENT NO. 1"
_NUMBER = re.compile(r"(?:NO\.?|#)\s*\d+\w*", re.I)

_MIXED_DOCUMENT = r"(?:Agreement|Contract|Lease|Sublease|Indenture|Deed|License|Licence|Amendment|Addendum)"
_MIXED_WORD = r"(?:[A-Z][a-z][\w&'-]*|of|and|to|for|on|the|No\.\s*\d+|#\d+)"
_MIXED_PHRASE = rf"((?:{_MIXED_WORD}\s+){{0,8}}?{_MIXED_DOCUMENT}(?:\s+No\.\s*\d+)?)\b"
# "This Walabot-HOME Reseller Agreement (" — the preamble names the document.
_PREAMBLE = re.compile(rf"\bThis\s+{_MIXED_PHRASE}(?=\s*[(,])")
# "Sponsorship Agreement THIS AGREEMENT made ...", "... Maintenance Agreement Between X And Y".
_BEFORE_PREAMBLE = re.compile(
    rf"{_MIXED_PHRASE}(?=\s+(?:This|THIS|Between|BETWEEN|[Bb]y\s+and\s+between|Party\s+A|made|dated)\b)"
)
_NOT_HEADING_WORDS = frozenset({"Table", "Contents", "Page", "Section", "Article", "Exhibit", "Schedule"})


def _capitals_runs(opening: str) -> list[list[re.Match]]:
    """Maximal runs of words without lower-case letters (numbers and "&" join them)."""
    runs: list[list[re.Match]] = []
    current: list[re.Match] = []
    for token in re.finditer(r"\S+", opening):
        word = token.group()
        if is_upper(word) or (current and re.fullmatch(r"[\d.&/#-]+", word)):
            current.append(token)
        else:
            if current:
                runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def _starts_heading_after(tokens: list[str], i: int) -> bool:
    """Whether a heading cannot include `tokens[i]` and what precedes it: the end of a sentence
    (a filing notice), a company's legal form ("ERCHONIA CORPORATION EXCLUSIVE ..."), a number
    other than "NO. 3"."""
    token = tokens[i]
    numbered = i and bare(tokens[i - 1]) in _NUMBERED and re.fullmatch(r"#?\d+\w*", token)
    if _NUMBER.fullmatch(token) or numbered:
        return False
    if bare(token) in LEGAL_SUFFIXES | _NOTICE or re.search(r"\d", token):
        return True
    initials = re.fullmatch(r"(?:\w\.)+", token)  # "U.S."
    return token.endswith((".", ":", ";", "]", ")")) and bare(token) != "NO" and not initials


def _pieces(run: list[re.Match]) -> list[list[re.Match]]:
    """A capitals run cut at the words that end a heading ("... AGREEMENT DATED AS OF ...")."""
    pieces: list[list[re.Match]] = [[]]
    previous = ""
    for token in run:
        word = bare(token.group())
        # "... SECURITIES ACT OF 1933, AS AMENDED" ends a filing notice.
        if word in _STOP or (word == "AMENDED" and previous == "AS"):
            pieces.append([])
        else:
            pieces[-1].append(token)
        previous = word
    return [piece for piece in pieces if piece]


def _heading_of_run(run: list[re.Match]) -> list[re.Match]:
    """The heading words of a capitals run without stop words, or [] when it holds no heading."""
    tokens = [token.group() for token in run]
    words = [bare(token) for token in tokens]
    end = next((i for i, word in enumerate(words) if word in TERMINAL_WORDS), None)
    if end is None:
        end = max((i for i, word in enumerate(words) if word in SECONDARY_WORDS), default=None)
    if end is None:
        return []
    start = max((i + 1 for i in range(end) if _starts_heading_after(tokens, i)), default=0)
    start = max(start, end + 1 - _MAX_WORDS)
    number = _NUMBER.match(" ".join(tokens[end + 1 :]))
    if number:
        end += len(number.group().split())
    elif words[end] in TERMINAL_WORDS and end + 1 < len(words) and words[end + 1] in {"AND", "AMENDMENT"}:
        extension = words[end + 1 : end + 1 + _EXTENSION]
        if not any(word in LEGAL_SUFFIXES for word in extension):
            end += len(extension)
    heading = run[start : end + 1]
    # "ENTIRE AGREEMENT" is a clause's heading, not the document's.
    if len(heading) < 2 or words[start] == "ENTIRE":
        return []
    return heading


def _blank(match: re.Match) -> str:
    """Furniture replaced by a run-breaking "|" of the same length (offsets stay valid)."""
    return (" |" + " " * len(match.group()))[: len(match.group())]


def _mixed_case_heading(text: str) -> re.Match | None:
    for pattern in (_BEFORE_PREAMBLE, _PREAMBLE):
        for match in pattern.finditer(text):
            words = match.group(1).split()
            before = text[: match.start()].split()[-1:]
            # "... the Asset Purchase Agreement dated ..." names another document.
            if before and before[0][:1].islower() and pattern is _BEFORE_PREAMBLE:
                continue
            if len(words) >= 2 and not _NOT_HEADING_WORDS & set(words) and words[0] != "Entire":
                return match
    return None


def find_heading(opening: str, known: dict[str, str]) -> tuple[str, int]:
    """The document-type heading of `opening` (the first few thousand characters, whitespace
    collapsed) in title case, e.g. "Amendment No. 3 to Wireless Content License Agreement", and
    the offset where it ends; ("", 0) when there is none, or only a bare "AGREEMENT". `known`
    gives the document's own spelling of words (see casing.known_spellings)."""
    cleaned = _FURNITURE.sub(_blank, opening)
    for piece in (piece for run in _capitals_runs(cleaned) for piece in _pieces(run)):
        heading = _heading_of_run(piece)
        if heading:
            return recase([token.group().strip(",;:") for token in heading], known), heading[-1].end()
    match = _mixed_case_heading(cleaned)
    if match:
        return recase(match.group(1).split(), known), match.end()
    return "", 0
