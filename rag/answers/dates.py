"""A contract's own dates, and the dates a lawyer computes from them.

- `anchors`: the dates a document defines: the date it is made ("dated as of June 24, 2020",
  "made and entered into this 24th day of June, 2020": `AGREEMENT`), and its "Effective Date" or
  "Commencement Date" where the text defines one (`EFFECTIVE`; a definition by reference, "the
  date first written above", is the agreement date).
- `term_end`: where a clause gives a length from a start ("five (5) years from the Effective
  Date", "until the third anniversary of the Commencement Date", "for a period of two years
  commencing on January 1, 2005") and the start is a date the text or the anchors give, the end
  date, with what it was computed from. Never a start the document does not give.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import date

from dateutil.relativedelta import relativedelta

from .values import DURATION, dates_in, length_of

AGREEMENT = "agreement"
EFFECTIVE = "effective"

_QUOTE = "[\"'\u201c\u201d\u2018\u2019]"
# "(the "Effective Date")", "(hereinafter the “Commencement Date”)"
_DEFINED_AFTER = re.compile(
    rf"\(\s*(?:hereinafter\s+)?(?:referred\s+to\s+as\s+)?(?:the\s+|this\s+)?{_QUOTE}?\s*"
    rf"(?P<term>Effective\s*Date|Commencement\s+Date|Start\s+Date|Execution\s+Date)\s*{_QUOTE}?",
    re.I,
)
# '"Effective Date" means/shall mean …'
_DEFINED_BEFORE = re.compile(
    rf"{_QUOTE}\s*(?P<term>Effective\s+Date|Commencement\s+Date)\s*{_QUOTE}\s*(?:shall\s+)?(?:mean|means|is|shall\s+be)\b",
    re.I,
)
_FIRST_WRITTEN = re.compile(
    r"date\s+(?:first\s+)?(?:written|set\s+forth|stated|shown)\s+above|date\s+hereof|date\s+of\s+this\s+agreement",
    re.I,
)
# How a preamble dates the agreement: "dated (as of)", "made (and entered into) (as of|on|this)",
# "entered into (as of|on)", "is effective as of", "as of" near the start of the text.
_DATED = re.compile(
    r"\b(?:dated|made|entered\s+into|executed|signed|effective|as\s+of|this|on)\b[^.;]{0,60}$", re.I
)
# Anywhere: "This Agreement ... is made/dated/entered into ... <date>" and the signature block's
# "IN WITNESS WHEREOF, the parties have executed this Agreement as of <date>". "Effective" is the
# agreement being effective, not the defined term: "this Agreement shall commence on the Effective
# Date and end on November 30, 2014" dates the term's end, not the agreement.
_AGREEMENT_DATED = re.compile(
    r"(?:\bthis\s+(?:[\w&,\-]+\s+){0,8}?(?:agreement|amendment|addendum|contract|lease|license)\b"
    r"[^.;]{0,160}?\b(?:dated|made|entered\s+into|executed|effective(?!\s+date))\b[^.;]{0,40}"
    r"|\bIN\s+WITNESS\s+WHEREOF\b[^.]{0,200}?\b(?:as\s+of|on|this)\b[^.;]{0,30})$",
    re.I,
)
# A cover page's or signature block's bare date: "Date: March 1, 1998", "Dated 05/05/98".
_DATE_LABEL = re.compile(r"\b(?:date|dated)\s*:?\s*$", re.I)
PREAMBLE_CHARS = 2500
# A signature block: the words around the signatures ("By:", "/s/", "Name:", "Title:").
_SIGNATURE_WORDS = re.compile(r"\bBy\s*:|/s/|\bName\s*:|\bTitle\s*:?\s|\bIN\s+WITNESS\s+WHEREOF\b", re.I)
SIGNATURE_WINDOW = 400  # characters before a signature date in which the block's words stand
# A date a table row labels after it: "4/24/2018 04/25/2018 Date Date", "January 22, 2020 (Date)".
_DATE_LABEL_AFTER = re.compile(r"^(?:\s*[\d/.\-]{6,10})*\s*\(?\s*date\b", re.I)
# An Effective Date that is the last signature's: "the later of the two signature dates below",
# "the date of last signature", "the date the last party hereto has executed this Agreement".
_LAST_SIGNATURE = re.compile(
    r"\b(?:last|later)\s+(?:of\s+the\s+(?:two\s+)?)?(?:signature|execution)|"
    r"\blast\s+(?:party|parties)\s+(?:hereto\s+)?(?:has\s+|to\s+)?(?:execute|sign)|"
    r"\bdate\s+of\s+(?:the\s+)?last\s+signature",
    re.I,
)


@dataclass(frozen=True)
class Anchor:
    """A date the document defines: which (`AGREEMENT`/`EFFECTIVE`), the date, and where its words
    stand in the text read (`start`, `end`)."""

    name: str
    value: date
    start: int
    end: int


def anchors(text: str, *, opening: bool = True, signatures: bool = True) -> dict[str, Anchor]:
    """The agreement date and the Effective Date `text` (a document's text, or a passage of it that
    holds its preamble, definitions or signature block) gives, by name. `opening`: the text starts
    the document, so a date its first lines give ("dated", "as of", a cover page's "Date:") is the
    agreement's; elsewhere only a sentence saying the agreement is dated so counts. `signatures`:
    failing those, the last date its signature blocks give (off where other passages of the same
    document may still date it in words)."""
    found: dict[str, Anchor] = {}
    agreement = _agreement_date(text, opening=opening, signatures=signatures)
    if agreement is not None:
        found[AGREEMENT] = agreement
    effective = _defined_date(text, agreement) or (_cover_effective_date(text) if opening else None)
    if effective is not None:
        found[EFFECTIVE] = effective
    return found


def _agreement_date(text: str, *, opening: bool, signatures: bool = True) -> Anchor | None:
    """The date the text says the agreement is dated, made or executed on (the first such), else,
    in the document's opening, the first date its words call the agreement's or label a date."""
    dates = dates_in(text)
    for found in dates:
        if _AGREEMENT_DATED.search(text[max(0, found.start - 260) : found.start]):
            return Anchor(AGREEMENT, found.value, found.start, found.end)
    if opening:
        for found in dates:
            if found.start >= PREAMBLE_CHARS:
                break
            before = text[max(0, found.start - 80) : found.start]
            if _signature_date(text, found):
                continue  # a short contract's signatures: the last one dates it (below)
            if _EFFECTIVE_LABEL.search(before):
                continue  # a cover page's "EFFECTIVE DATE": when it takes effect, not when it was made
            if _DATED.search(before) or _DATE_LABEL.search(before) or _on_its_own_line(text, found):
                return Anchor(AGREEMENT, found.value, found.start, found.end)
    # Dated nowhere else: the signatures' date (the last, when the parties signed on different days:
    # the agreement is made when the last of them signs).
    return _last_signature(text, dates) if signatures else None


def _on_its_own_line(text: str, found) -> bool:
    """Whether the date `found` stands alone on its line: a letter's or a cover page's date
    ("AGENCY AGREEMENT\n\nMay 14, 2014\n\nKeefe, Bruyette & Woods, Inc. …")."""
    line_start = text.rfind("\n", 0, found.start) + 1
    line_end = text.find("\n", found.end)
    if line_end < 0:  # the text's last line
        line_end = len(text)
    return not text[line_start : found.start].strip() and not text[found.end : line_end].strip()


def _signature_date(text: str, found) -> bool:
    """Whether the date `found` is labelled a date ("Date:" before it, or a table's "Date" after
    it) within a signature block."""
    labelled = _DATE_LABEL.search(text[max(0, found.start - 20) : found.start]) or _DATE_LABEL_AFTER.match(
        text[found.end : found.end + 40]
    )
    block = _SIGNATURE_WORDS.search(text[max(0, found.start - SIGNATURE_WINDOW) : found.start])
    return bool(labelled) and bool(block)


def _last_signature(text: str, dates) -> Anchor | None:
    """The latest date a signature block of `text` labels ("Date: November 5, 2019" under "By:",
    "Name:", "Title:"), or None."""
    signed = [found for found in dates if _signature_date(text, found)]
    if not signed:
        return None
    last = max(signed, key=lambda found: (found.value, found.start))
    return Anchor(AGREEMENT, last.value, last.start, last.end)


def _defined_date(text: str, agreement: Anchor | None) -> Anchor | None:
    """The date defined as the "Effective Date" (or "Commencement Date"): the date just before
    "(the "Effective Date")", or the one after '"Effective Date" means'; a definition by reference
    to the date above is the agreement date."""
    for m in _DEFINED_AFTER.finditer(text):
        before = text[max(0, m.start() - 120) : m.start()]
        dates = dates_in(before)
        if dates and before[dates[-1].end :].strip(" ,") == "":
            offset = m.start() - len(before)
            return Anchor(EFFECTIVE, dates[-1].value, offset + dates[-1].start, offset + dates[-1].end)
        if agreement is not None and _FIRST_WRITTEN.search(before[-60:]):
            return Anchor(EFFECTIVE, agreement.value, agreement.start, agreement.end)
        if _LAST_SIGNATURE.search(before[-80:]):
            return _signed_last(text)
    for m in _DEFINED_BEFORE.finditer(text):
        after = text[m.end() : m.end() + 160]
        sentence = after.split(".")[0] if not dates_in(after[:40]) else after
        dates = dates_in(sentence)
        if dates:
            return Anchor(EFFECTIVE, dates[0].value, m.end() + dates[0].start, m.end() + dates[0].end)
        if agreement is not None and _FIRST_WRITTEN.search(sentence):
            return Anchor(EFFECTIVE, agreement.value, agreement.start, agreement.end)
        if _LAST_SIGNATURE.search(sentence):
            return _signed_last(text)
    return None


# A cover page's "EFFECTIVE DATE\n\n JUNE 1, 1998" or "Effective Date: March 1, 1998".
_EFFECTIVE_LABEL = re.compile(r"\beffective\s+date\s*:?\s*$", re.I)


def _cover_effective_date(text: str) -> Anchor | None:
    """A date the document's opening labels its Effective Date, not in a sentence: a cover page."""
    for found in dates_in(text[:PREAMBLE_CHARS]):
        if _EFFECTIVE_LABEL.search(text[max(0, found.start - 80) : found.start]):
            return Anchor(EFFECTIVE, found.value, found.start, found.end)
    return None


def _signed_last(text: str) -> Anchor | None:
    """The Effective Date a definition puts at the last signature: that signature's date, if the
    text's signature blocks date it."""
    last = _last_signature(text, dates_in(text))
    return Anchor(EFFECTIVE, last.value, last.start, last.end) if last else None


# --- the end of a term ---------------------------------------------------------------------------

_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "fifteenth": 15, "twentieth": 20,
}  # fmt: skip
_START = (
    r"(?:the\s+)?(?:date\s+of\s+(?:the\s+)?)?[\"\u201c]?(?P<start>Effective\s+Date|Commencement\s+Date|Start\s+Date|Execution\s+Date|"
    r"date\s+(?:first\s+)?(?:written|set\s+forth)\s+above|date\s+first\s+above\s+written|date\s+hereof|"
    r"date\s+of\s+(?:this\s+)?(?:agreement|execution)|"
    r"execution\s+(?:of\s+this\s+agreement|hereof))"
)
_FROM = (
    r"\s*(?:\(\s*\d+\s*\)\s*)?(?:calendar\s+)?"
    r"(?:from|after|following|of|(?:year\s+)?anniversary\s+of|commencing\s+(?:on|with)|beginning\s+(?:on|with)|"
    r"starting\s+(?:on|with))\s+"
)
# A clause that names its start first and its length after, in one sentence: "shall commence on the
# Effective Date and continue for a period of five (5) years", "effective on 06 October 2000 and
# shall have a duration of two years", "beginning on the Effective Date and ending two (2) years
# thereafter" (or the length first: "for a period of four (4) years, commencing on the Effective Date").
_STARTS = re.compile(
    r"\b(?i:commenc\w*|begin\w*|began|start\w*|effective|in\s+effect|takes?\s+effect)\s+(?i:on|as\s+of|upon|from|with)\s+"
    + _START.replace(
        "(?P<start>", r"(?P<start>(?:[A-Z][a-z]+\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+[A-Za-z]+\.?,?\s+\d{4})|"
    ),
)
_LASTS = re.compile(
    r"(?:\bfor\b|period\s+of|term\s+of|duration\s+of|extend\w*\s+for|ending)[^.;]{0,25}$|\b(?:is|be)\s+$",
    re.I,
)
_THEREAFTER = re.compile(r"^\s*(?:thereafter|after\s+that)", re.I)
_DEADLINE = re.compile(r"\bwithin\s*$", re.I)
# Words just before a length that make it a renewal's or a notice's, and just after it a notice's.
_OTHER_ROLE_BEFORE = re.compile(r"renew|successive|additional|extension|notice|prior", re.I)
_NOTICE_AFTER = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:notice|prior|advance)", re.I)
_END_OF_YEAR = re.compile(
    r"\b(?:until|through|to)\s+(?:the\s+)?end\s+of\s+(?:calendar\s+year\s+)?(?P<year>(?:19|20)\d{2})\b", re.I
)
_ANNIVERSARY = re.compile(rf"(?P<ord>\d{{1,2}})(?:st|nd|rd|th)|(?P<word>{'|'.join(_ORDINALS)})", re.I)


@dataclass(frozen=True)
class TermEnd:
    """A computed end date: `value`, from the `start` date named `start_name` ("the Effective
    Date", or the date itself) plus `length` (the words as written), found at `start`..`end` of the
    clause read."""

    value: date
    start_date: date
    start_name: str
    length: str
    span: tuple[int, int]
    # Why the start is presumed, not read ("" when the document dates it): PRESUMED_UNDATED (the
    # Effective Date is defined without a date, so the agreement's date stands in) or
    # PRESUMED_UNSTARTED (the clause gives the term's length and no start).
    presumed: str = ""


PRESUMED_UNDATED = "undated"
PRESUMED_UNSTARTED = "unstarted"


def term_end(clause: str, known: dict[str, Anchor]) -> TermEnd | None:
    """The date the term `clause` describes ends, when it gives a length from a start the clause or
    `known` (the document's anchors) dates. Where the document dates no start but dates itself, the
    end counted from the agreement's date, marked `presumed` (a lawyer's working assumption, said
    as one): an Effective Date defined without a date ("the date of the last signature"), or a
    term with no start at all ("The term of this Agreement is twenty-four (24) months"). None
    otherwise."""
    found = _dated_term_end(clause, known)
    if found is not None or AGREEMENT not in known:
        return found
    if EFFECTIVE not in known:
        found = _dated_term_end(clause, {**known, EFFECTIVE: known[AGREEMENT]})
        if found is not None and found.start_name.lower() in _EFFECTIVE_NAMES:
            return dataclasses.replace(found, presumed=PRESUMED_UNDATED)
    return _unstarted(clause, known)


_EFFECTIVE_NAMES = ("effective date", "commencement date", "start date")
_NAMED_START = re.compile(
    r"\b(?:from|after|following|(?:commenc|beginn|start)ing\s+(?:on|with))\s+(?:the\s+)?[\"\u201c]?[A-Z]"
)
# The agreement's own term given as a length: "The term of this Agreement is twenty-four (24)
# months", "shall be for an initial term of five (5) years", "The term … will be for 12 months".
_TERM_IS = re.compile(
    r"\bterm\b(?:\s+of\s+(?:this|the)\s+\w+)?[^.;()]{0,30}?\b(?:is|be|of|for)\s+(?:an?\s+)?(?:period\s+of\s+)?$"
    r"|\binitial\s+(?:term|period)\s+(?:of|is|shall\s+be)\s+$",
    re.I,
)


def _unstarted(clause: str, known: dict[str, Anchor]) -> TermEnd | None:
    """A term given as a length with no start, counted from the Effective Date the document dates,
    else its date (presumed)."""
    if _STARTS.search(clause) or _NAMED_START.search(clause):
        return None  # it names a start the document does not date ("following the RFS Date")
    anchor = known.get(EFFECTIVE) or known.get(AGREEMENT)
    for m in DURATION.finditer(clause):
        if not _TERM_IS.search(clause[max(0, m.start() - 60) : m.start()]) or _another_role(clause, m):
            continue
        name = "Effective Date" if anchor.name == EFFECTIVE else "date of this agreement"
        found = _ended(m, anchor.value, name, m.span())
        return dataclasses.replace(found, presumed=PRESUMED_UNSTARTED) if found else None
    return None


def _dated_term_end(clause: str, known: dict[str, Anchor]) -> TermEnd | None:
    for m in DURATION.finditer(clause):
        if _DEADLINE.search(clause[max(0, m.start() - 12) : m.start()]):
            continue  # "executing a supply agreement within forty-five (45) days of the Execution Date"
        tail = clause[m.end() : m.end() + 120]
        linked = re.match(_FROM + _START, tail, re.I)
        if linked:
            start = _named_start(linked["start"], known)
            if start is not None:
                return _ended(m, start, linked["start"], (m.start(), m.end() + linked.end()))
            continue
        literal = re.match(_FROM + r"(?P<rest>.{0,40})", tail, re.I)
        if literal:
            dates = dates_in(literal["rest"])
            if dates and literal["rest"][: dates[0].start].strip(" ,the") == "":
                span = (m.start(), m.end() + literal.start("rest") + dates[0].end)
                return _ended(m, dates[0].value, dates[0].text, span)
    started = _started_then_lasting(clause, known)
    if started is not None:
        return started
    year_end = _END_OF_YEAR.search(clause)
    if year_end:
        value = date(int(year_end["year"]), 12, 31)
        return TermEnd(value, value, "", "the end of " + year_end["year"], year_end.span())
    for m in re.finditer(r"anniversary\s+of\s+" + _START, clause, re.I):
        before = clause[max(0, m.start() - 30) : m.start()]
        ordinal = list(_ANNIVERSARY.finditer(before))
        start = _named_start(m["start"], known)
        if not ordinal or start is None:
            continue
        last = ordinal[-1]
        years = int(last[1]) if last[1] else _ORDINALS[last[2].lower()]
        value = start + relativedelta(years=years)
        span = (m.start() - len(before) + last.start(), m.end())
        return TermEnd(value, start, _start_name(m["start"]), f"the {last.group(0)} anniversary", span)
    return None


def _started_then_lasting(clause: str, known: dict[str, Anchor]) -> TermEnd | None:
    """The end of a term whose sentence names its start and, before or after it, its length ("for
    a period of five (5) years", "two (2) years thereafter"); not a renewal's or a notice's length."""
    for start_match in _STARTS.finditer(clause):
        name = start_match["start"]
        literal = dates_in(name)
        start = literal[0].value if literal else _named_start(name, known)
        if start is None:
            continue
        sentence_start = max(clause.rfind(".", 0, start_match.start()) + 1, 0)
        sentence_end = clause.find(".", start_match.end())
        sentence_end = len(clause) if sentence_end < 0 else sentence_end
        for m in DURATION.finditer(clause, sentence_start, sentence_end):
            lead = clause[max(sentence_start, m.start() - 40) : m.start()]
            if _another_role(clause, m):
                continue
            if _LASTS.search(lead) or _THEREAFTER.match(clause[m.end() :]):
                span = (min(m.start(), start_match.start()), max(m.end(), start_match.end()))
                return _ended(m, start, literal[0].text if literal else name, span)
    return None


def _another_role(clause: str, m: re.Match) -> bool:
    """Whether the words around the length `m` make it a renewal's or a notice's, not the term's:
    the words before it back to the clause's last comma, semicolon or bracket ("…, with automatic
    renewals each for a period of five (5) years"; not "unless terminated on prior notice, shall be
    five years")."""
    before = clause[max(0, m.start() - 60) : m.start()]
    before = re.split(r"[,;:()]", before)[-1]
    return bool(_OTHER_ROLE_BEFORE.search(before) or _NOTICE_AFTER.match(clause[m.end() : m.end() + 30]))


def _named_start(name: str, known: dict[str, Anchor]) -> date | None:
    name = " ".join(name.lower().split())
    if name in ("effective date", "commencement date", "start date"):
        anchor = known.get(EFFECTIVE)
        return anchor.value if anchor is not None else None
    anchor = known.get(AGREEMENT)  # the date hereof / first written above / of this agreement
    return anchor.value if anchor is not None else None


def _start_name(name: str) -> str:
    """A start as the answer names it: "Effective Date" as defined, "the date hereof" in lower case."""
    name = " ".join(name.split())
    return name if name[:1].isupper() or name[:1].isdigit() else name.lower()


def after(start: date, count: float, unit: str) -> date:
    """`start` plus `count` `unit`s ("day", "week", "month", "quarter", "year"), as a calendar
    counts them: five years from 31 October 2019 is 31 October 2024."""
    n = int(count)
    step = {
        "day": relativedelta(days=n),
        "week": relativedelta(weeks=n),
        "month": relativedelta(months=n),
        "quarter": relativedelta(months=3 * n),
        "year": relativedelta(years=n),
    }[unit]
    return start + step


def _ended(m: re.Match, start: date, start_name: str, span: tuple[int, int]) -> TermEnd | None:
    length = length_of(m)
    if length is None or not int(length[0]):
        return None
    n, unit = int(length[0]), length[1]
    words = f"{n} {unit}{'' if n == 1 else 's'}"
    return TermEnd(after(start, n, unit), start, _start_name(start_name), words, span)


def readable(value: date) -> str:
    """A date as a lawyer reads it: "24 June 2020"."""
    return f"{value.day} {value.strftime('%B')} {value.year}"
