"""The parties a contract's preamble names: "by and between Tripath Technology, Inc. ("Tripath"),
and Uniquest Corporation ..." -> ["Tripath Technology", "Uniquest"].

A party is anchored by its defined term in the preamble ("X, a Delaware corporation ("X")"), by
"between X and Y" without one, or by "Party A: X" labels. Its short name drops the legal form
("Inc.", "LLC", "S.A.", ...) and a leading "The"; a long name gives way to its defined term when
that is a short form of it ("Beijing SINA" for "Beijing SINA Internet Information Service Co.").
"""

from __future__ import annotations

import re

from .casing import is_upper, running_capitals
from .names import Party, clean, name_run, plausible, short_name
from .words import LEGAL_SUFFIXES, bare, word_set

_TRIGGER = re.compile(
    r"\b(?:by\s+and\s+(?:between|among)|between|among|entered\s+into\s+by|made\s+by|is\s+by"
    r"|B\s?E\s?T\s?W\s?E\s?E\s?N)\b\s*:?",
    re.I,
)
_LABEL = re.compile(r"\bParty\s+[A-Z1-9]\b(?:\s*\([^)]{0,40}\))?\s*:\s*")
# Where the preamble ends and the recitals or the terms begin.
_PREAMBLE_END = re.compile(
    r"\b(?:WHEREAS|RECITALS?|WITNESSETH|BACKGROUND|NOW,?\s+THEREFORE|In\s+consideration)\b|R E C I T|W I T N",
    re.I,
)
_WINDOW = 1500
_SENTENCE_END = re.compile(r"[a-z0-9\")]\.\s+[A-Z]")
# A parenthesis holding a quoted term: ("Tripath"), (the "Trust"), (hereinafter called "BII"); or
# (hereinafter) referred to as "Licensor" without one.
_DEFINED = re.compile(
    r"\([^()]{0,120}?[\"'](?P<term>[^\"']{1,60})[\"'][^()]{0,120}\)"
    r"|\b(?i:hereinafter\s+(?:referred\s+to\s+as|called)|referred\s+to\s+(?:herein\s+|in\s+this\s+agreement\s+)?as)"
    r"\s*:?\s*(?:the\s+)?[\"'](?P<bare>[^\"']{1,60})[\"']"
)
# Defined terms that name something other than a party.
_NOT_A_PARTY = word_set(
    """AGREEMENT AMENDMENT CONTRACT DATE EFFECTIVE ACT NOTES SHARES STOCK OFFERING PROGRAM TERRITORY
    PRODUCTS PRODUCT SERVICES PLAN BRAND PROPERTY PREMISES PROJECT"""
)
_COLLECTIVE = frozenset({"PARTIES", "PARTY"})
_SPLIT_WORDS = frozenset({"BY", "BETWEEN", "AMONG", "AND"})
_MAX_PARTIES = 3


def _splits_parties(previous: str, word: str, following: str) -> bool:
    """Whether `word` separates one party (or its description) from the next party."""
    if bare(word) not in _SPLIT_WORDS or word in {"By", "Between", "Among"}:
        return False
    if bare(word) != "AND" or word.endswith(":") or previous.endswith((",", ";", ")")):
        return True
    # "Savings and Loan" is one name; "corporation and X", "LLC and X", "ACME and GLOBEX" are two.
    return (
        not previous[:1].isupper()
        or bare(previous) in LEGAL_SUFFIXES
        or (word == "and" and is_upper(previous) and is_upper(following))
        or (word == "AND" and not is_upper(previous))
    )


def _parts(segment: str) -> list[str]:
    """`segment` cut where one party's description ends and another's name may begin."""
    tokens = segment.split()
    parts, current = [], []
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else ""
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if _splits_parties(previous, token, following) or re.fullmatch(r"\(\w\)", token):
            parts.append(" ".join(current))
            current = []
        else:
            current.append(token)
            if token.endswith(";"):
                parts.append(" ".join(current))
                current = []
    parts.append(" ".join(current))
    return parts


def _names(parts: list[str], limit: int) -> list[list[str]]:
    names = []
    for part in parts:
        words = clean(name_run(part))
        if words:
            names.append(words)
            if len(names) == limit:
                break
    return names


def _parties_in_window(window: str, *, loose: bool) -> list[Party]:
    """Parties anchored by defined terms in `window`, then one after a final "and" without one;
    without defined terms and when `loose`, the first names of "X and Y". Once two are found, the
    end of a sentence ends the preamble."""
    parties: list[Party] = []
    position = 0
    for match in _DEFINED.finditer(window):
        term = " ".join((match.group("term") or match.group("bare")).split())
        segment = window[position : match.start()]
        if _is_term(term, _COLLECTIVE) or (len(parties) >= 2 and _SENTENCE_END.search(segment)):
            break
        position = match.end()
        if not _is_term(term, _NOT_A_PARTY):
            # The first part that starts with a name: a previous party's description is skipped.
            parties += [Party(tuple(words), term) for words in _names(_parts(segment), 1)]
    tail = window[position:]
    if not parties:
        return [Party(tuple(words), "") for words in _names(_parts(tail)[:3], 2)] if loose else []
    if re.match(r"[\s,]*(?:and|AND|-+\s*and\s*-+)\s", tail):
        parties += [Party(tuple(words), "") for words in _names([tail], 1)]
    return parties


def _is_term(term: str, excluded: frozenset[str]) -> bool:
    return any(word in excluded for word in bare(term).replace("-", " ").split())


def _windows(opening: str, heading_end: int):
    """Candidate preambles, (text, loose): after each "between"/"among"/"entered into by" before
    the recitals, then after the heading (where only defined terms anchor parties)."""
    recitals = _PREAMBLE_END.search(opening, heading_end)
    for match in _TRIGGER.finditer(opening, 0, recitals.start() if recitals else len(opening)):
        yield opening[match.end() : match.end() + _WINDOW], True
    yield opening[heading_end : heading_end + _WINDOW], False


def _distinct(names: list[str]) -> list[str]:
    """`names` without repeats, nor a "A and B" that repeats two of them."""
    result: list[str] = []
    for name in names:
        seen = {n.lower() for n in result}
        parts = {part.strip().lower() for part in re.split(r"\band\b|&", name, flags=re.I)}
        if name.lower() not in seen and not (len(parts) > 1 and parts <= seen):
            result.append(name)
    return result


def find_parties(opening: str, known: dict[str, str], heading_end: int = 0) -> list[str]:
    """Short names of the parties `opening` (whitespace collapsed) names, in order: at most
    three, the third "et al." when there are more; [] when none is found. `known` gives the
    document's own spelling of words (casing.known_spellings); the preamble is looked for after
    "between"/"among"/"entered into by", else after `heading_end`."""
    # Words written in lower case in running text (not in "www.excite.com").
    common = frozenset(re.findall(r"(?<![\w./@-])[a-z][a-z'-]*(?![\w/@-]|\.\w)", opening))
    labels = [opening[match.end() :] for match in _LABEL.finditer(opening)]
    labelled = [Party(tuple(words), "") for words in _names(labels, len(labels))]
    best = [party for party in labelled if plausible(party, common)]
    if len(best) < 2:
        for window, loose in _windows(opening, heading_end):
            end = _PREAMBLE_END.search(window)
            found = _parties_in_window(window[: end.start()] if end else window, loose=loose)
            parties = [party for party in found if plausible(party, common)]
            if len(parties) >= 2:
                best = parties
                break
            best = best or parties
    spellings = {**running_capitals(opening), **known}
    names = _distinct([short_name(party, spellings, common) for party in best])
    if len(names) > _MAX_PARTIES:
        return [*names[: _MAX_PARTIES - 1], "et al."]
    return names
