"""Legal identifiers in a keyword query: section numbers, rules, case citations.

PostgreSQL's english parser drops "§", splits "2-207" into "2" and "-207" but, typed with an en dash,
into "2" and "207", and keeps "s.10.2" as one token, so full-text search alone matches them too
loosely or not at all. Each identifier found in the query becomes a case-insensitive regular
expression (PostgreSQL ARE syntax) that the chunk text must match, tolerant of spacing and dash
variants but strict about the number itself: "10.2" never matches "10.25" or "110.2".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DASHES = "-\u2010\u2011\u2012\u2013\u2014"  # "-" first: a literal in both regex dialects
_SEP = rf"\{_DASHES}."  # for Python character classes: the escaped "-" is no range
_NUMBER = rf"\d+[a-z]?(?:[{_SEP}]\d+[a-z]?)*(?:\s?\([a-z0-9]{{1,4}}\))*"
# A number with inner structure is distinctive on its own: 10.2, 2-207, 12(b)(6).
_STRUCTURED = rf"\d+[a-z]?(?:(?:[{_SEP}]\d+[a-z]?)+(?:\s?\([a-z0-9]{{1,4}}\))*|(?:\s?\([a-z0-9]{{1,4}}\))+)"

# Label spellings in the query → every spelling of that label accepted in the text.
_LABEL_GROUPS = {
    "section": r"(?:§§?|sections?|secs?\.|s\.)",
    "paragraph": r"(?:¶¶?|paragraphs?|paras?\.)",
    "article": r"(?:articles?|arts?\.)",
    "rule": r"(?:rules?|r\.)",
    "clause": r"(?:clauses?|cl\.)",
    "chapter": r"(?:chapters?|ch\.)",
}
_QUERY_LABEL = (
    r"§§?|¶¶?|(?<!\w)(?:sections?|secs?\.|paragraphs?|paras?\.|articles?|arts?\.|rules?|clauses?|cl\.|"
    r"chapters?|ch\.)"
)

_LABELED = re.compile(rf"(?P<label>{_QUERY_LABEL})\s*(?P<number>{_NUMBER})(?!\w)", re.I)
_PLAIN = re.compile(rf"(?<![\w{_SEP}])(?P<number>{_STRUCTURED})(?!\w)", re.I)
# Reporter: capitalised abbreviations with periods and ordinals ("F.3d", "U.S.", "S. Ct.",
# "F. Supp. 2d") or a short all-caps code ("WL", "UKSC"); "12 Motion 6" is not a citation.
_REPORTER = r"(?:[A-Z][A-Za-z]{0,6}\.\s?(?:\d(?:d|th|st|nd|rd)\.?\s?|[A-Z][A-Za-z]{0,6}\.\s?)*|[A-Z]{2,6}\s)"
_CITATION = re.compile(
    rf"(?<![\w.])(?P<volume>\d{{1,4}})\s+(?P<reporter>{_REPORTER})\s*(?P<page>\d{{1,6}})(?!\w)"
)


@dataclass(frozen=True)
class Identifier:
    text: str  # as written in the query
    pattern: str  # PostgreSQL regular expression the chunk text must match (case-insensitive)
    terms: str  # what full-text search should rank on ("2-207"), without the label
    label: str = ""  # the label word as typed ("Section", "Rule"; not "§"): ranked on, not required


def _number_pattern(number: str) -> str:
    """Regex for a number: literal digits and letters, any dash for a dash, optional space before "("."""
    parts = []
    for char in number:
        if char.isspace():
            continue
        if char in _DASHES:
            parts.append(f"[{_DASHES}]")
        elif char == "(":
            parts.append(r"\s?\(")
        elif char.isalnum():
            parts.append(char)
        else:
            parts.append("\\" + char)
    return "".join(parts)


_BEFORE = r"(?<![[:alnum:]])"
_AFTER = r"(?![[:alnum:]])"


def python_regex(pattern: str) -> re.Pattern[str]:
    """The Python equivalent of an `Identifier.pattern` (case-insensitive), to find identifiers in
    text outside the database (snippets). Knows the few ARE constructs this module writes."""
    flags = re.IGNORECASE
    if pattern.startswith("(?n)"):  # newline-sensitive: "^" matches at every line start
        pattern, flags = pattern[4:], flags | re.MULTILINE
    pattern = pattern.replace("[[:alnum:]]", r"[^\W_]")
    if "[[:" in pattern or "(?" in pattern.replace("(?<!", "").replace("(?!", "").replace("(?:", ""):
        raise ValueError(f"no Python equivalent known for {pattern!r}")
    return re.compile(pattern, flags)


def _labeled(label: str, number: str) -> Identifier:
    group = _label_group(label)
    core = _number_pattern(number)
    if re.fullmatch(r"\d+[a-z]?", number, re.I):
        # A bare "10" is everywhere ("10 days"): require the label ("Section 10", "§ 10", "Sec. 10")
        # or a numbered heading line ("10. Termination").
        pattern = rf"(?n){_BEFORE}{_LABEL_GROUPS[group]}\s*{core}{_AFTER}|^[ \t]*{core}\.(?:\s|\d)"
    else:
        # "Section 10.2" is clause "10.2 Payment" too: the structured number alone is the key.
        pattern = rf"{_BEFORE}{core}{_AFTER}"
    word = label if label[0].isalpha() else ""
    return Identifier(text=f"{label} {number}", pattern=pattern, terms=number, label=word)


def _label_group(label: str) -> str:
    label = label.lower()
    if label.startswith(("§", "sec", "s.")):
        return "section"
    if label.startswith(("¶", "para")):
        return "paragraph"
    if label.startswith("art"):
        return "article"
    if label.startswith("r"):
        return "rule"
    if label.startswith("cl"):
        return "clause"
    return "chapter"


def _citation(volume: str, reporter: str, page: str) -> Identifier:
    # "F.3d" and "F. 3d" are the same reporter; spacing between its parts is free.
    pieces = [re.escape(piece) for piece in re.split(r"\s+|(?<=\.)", reporter.strip()) if piece]
    reporter_pattern = r"\s*".join(pieces)
    pattern = rf"{_BEFORE}{volume}\s+{reporter_pattern}\s*{page}{_AFTER}"
    text = f"{volume} {reporter.strip()} {page}"
    return Identifier(text=text, pattern=pattern, terms=text)


def extract_identifiers(query: str) -> tuple[list[Identifier], str]:
    """The identifiers in `query` and the query with them blanked out (for the word search)."""
    found: list[Identifier] = []
    spans: list[tuple[int, int]] = []

    def take(match: re.Match, identifier: Identifier) -> None:
        if any(start < match.end() and match.start() < end for start, end in spans):
            return  # part of an identifier already taken
        spans.append(match.span())
        found.append(identifier)

    for match in _CITATION.finditer(query):
        take(match, _citation(match["volume"], match["reporter"], match["page"]))
    for match in _LABELED.finditer(query):
        take(match, _labeled(match["label"], match["number"]))
    for match in _PLAIN.finditer(query):
        number = match["number"]
        take(
            match,
            Identifier(text=number, pattern=rf"{_BEFORE}{_number_pattern(number)}{_AFTER}", terms=number),
        )
    rest = list(query)
    for start, end in spans:
        rest[start:end] = " " * (end - start)
    unique = list({identifier.pattern: identifier for identifier in found}.values())
    return unique, "".join(rest)
