"""Typed values found in contract text, each with its offsets: dates, durations, jurisdictions,
amounts, percentages, and the marks of a redacted or blank value.

Pure text functions, no model and no database: they read what a clause says in the ways contracts
write it ("the 24th day of June, 2020", "five (5) years", "the laws of the State of New York",
"US$5,000", "[***]"), and never guess. A value a text does not hold is not found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

# --- dates -------------------------------------------------------------------------------------

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
            ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
            ("october", "oct"), ("november", "nov"), ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_BLANK_DAY = r"(?P<blank>_{2,}|\[\s*\*+\s*\]|\[\s*\]|\*{3,})"
_DAY = r"(?P<day>\d{1,2})(?:\s*(?:s\s?t|n\s?d|r\s?d|t\s?h))?"  # "14th", and "14t h" as scans split it
DATE_FORMS = [
    # June 24, 2020 / Jun. 24th, 2020 / June 24 2020 / April 15 , 2010 / March 18. 2021 (a typo)
    re.compile(rf"\b{_MONTH}\s+{_DAY}\s*[,.]?\s+{_YEAR}\b", re.I),
    # 24 June 2020 / the 24th day of June, 2020 / 24th of June, 2020
    re.compile(rf"\b{_DAY}\s+(?:day\s+of\s+|of\s+)?{_MONTH},?\s+(?:in\s+the\s+year\s+)?{_YEAR}\b", re.I),
    # 6/24/2020 and 05/05/98 (US order), 2020-06-24, 1.4.2011 (day first, as Europe writes it)
    re.compile(r"\b(?P<mn>\d{1,2})/(?P<day>\d{1,2})/(?P<year>(?:19|20)\d{2}|\d{2})\b"),
    re.compile(r"\b(?P<year>(?:19|20)\d{2})-(?P<mn>\d{2})-(?P<day>\d{2})\b"),
    re.compile(r"\b(?P<day>\d{1,2})\.(?P<mn>\d{1,2})\.(?P<year>(?:19|20)\d{2})\b"),
]
# "the ___ day of June, 2020", "June __, 2020", "[***], 2020": a date the copy leaves blank or redacts
BLANK_DATE_FORMS = [
    re.compile(rf"{_BLANK_DAY}\s+(?:day\s+of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_MONTH}\s+{_BLANK_DAY},?\s+{_YEAR}\b", re.I),
]


@dataclass(frozen=True)
class Found:
    """A value found in a text: what it is (`value`: a date, days as a float, a name, an amount
    string) and where (`start`, `end` into the text read)."""

    value: object
    start: int
    end: int
    text: str  # the words as written


def dates_in(text: str) -> list[Found]:
    """The calendar dates written in `text`, in order (each once, the longest reading)."""
    found: list[Found] = []
    for pattern in DATE_FORMS:
        for m in pattern.finditer(text):
            parts = m.groupdict()
            try:
                month = MONTHS[parts["month"].lower()] if parts.get("month") else int(parts["mn"])
                year = int(parts["year"])
                year += 0 if year >= 100 else 1900 if year >= 50 else 2000  # "05/05/98"
                value = date(year, month, int(parts["day"]))
            except (KeyError, ValueError):
                continue
            found.append(Found(value, m.start(), m.end(), m.group(0)))
    return _longest_first(found)


def blank_dates_in(text: str) -> list[Found]:
    """Dates the copy leaves blank or redacts ("the ___ day of June, 2020"): value is the year."""
    found = [
        Found(int(m["year"]), m.start(), m.end(), m.group(0))
        for p in BLANK_DATE_FORMS
        for m in p.finditer(text)
    ]
    return _longest_first(found)


def _longest_first(found: list[Found]) -> list[Found]:
    """`found` without readings inside a longer one, in text order."""
    kept: list[Found] = []
    for item in sorted(found, key=lambda f: (f.start, -(f.end - f.start))):
        if kept and item.start < kept[-1].end:
            continue
        kept.append(item)
    return kept


# --- durations and numbers ---------------------------------------------------------------------

_UNITS = {"day": 1, "business day": 1, "week": 7, "month": 30, "quarter": 91, "year": 365}
_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
NUMBER_WORDS = {word: n for n, word in enumerate(_ONES)} | _TENS | {"a": 1, "an": 1, "one hundred": 100}
_NUMBER_WORD = (
    r"(?:(?:one|two|three)\s+hundred(?:\s+(?:and\s+)?)?)?"
    r"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen)"
)
DURATION = re.compile(
    rf"\b(?:(?P<word>{_NUMBER_WORD}|an?)\s*(?:\(\s*(?P<paren>\d{{1,4}})\s*\))?|(?P<num>\d{{1,4}}(?:\.\d+)?))"
    r"[\s-]*(?:\(\s*\d{1,4}\s*\)[\s-]*)?"
    r"(?:(?:calendar|business|working|consecutive|full|additional|further|successive|subsequent)\s+){0,2}"
    r"(?P<unit>day|week|month|quarter|year)s?\b",
    re.I,
)
_HUNDREDS = re.compile(r"(one|two|three)\s+hundred", re.I)


def number_of(words: str) -> int | None:
    """The number a phrase of number words says ("ninety" → 90, "one hundred and eighty" → 180)."""
    words = words.lower().replace("-", " ").strip()
    total = 0
    hundreds = _HUNDREDS.match(words)
    if hundreds:
        total = NUMBER_WORDS[hundreds.group(1)] * 100
        words = words[hundreds.end() :].replace("and", " ").strip()
    for word in words.split():
        if word not in NUMBER_WORDS:
            return None
        total += NUMBER_WORDS[word]
    return total or None


def length_of(m: re.Match) -> tuple[float, str] | None:
    """The count and unit a DURATION match says ("five (5) years" → (5, "year")); None for none."""
    if m["paren"]:
        n: float | None = int(m["paren"])
    elif m["num"]:
        n = float(m["num"])
    else:
        n = number_of(m["word"])
    return (n, m["unit"].lower()) if n else None


def lengths_in(text: str) -> list[tuple[float, str]]:
    """The (count, unit) of every duration written in `text`, in order."""
    return [length for m in DURATION.finditer(text) if (length := length_of(m)) is not None]


# A period written without a number: "continue on a year to year basis", "month-to-month",
# "for successive annual periods".
PERIODIC = re.compile(
    r"\b(?P<unit>year|month)[\s-]+to[\s-]+(?:year|month)\b|\bannual(?=\s+(?:periods?|terms?|renewals?|basis)\b)",
    re.I,
)


def durations_in(text: str) -> list[Found]:
    """The durations written in `text` ("five (5) years", "90 days", "one-year", "a month", "an
    additional year", "year to year"), in order: value is the length in days (a month 30, a year
    365); text names the number and unit."""
    found = []
    for m in DURATION.finditer(text):
        length = length_of(m)
        if length is not None:
            n, unit = length
            found.append(Found(n * _UNITS[unit], m.start(), m.end(), _duration_words(n, unit)))
    for m in PERIODIC.finditer(text):
        unit = (m["unit"] or "year").lower()
        # "a month-to-month basis": one period, from "a" to its end ("a month" alone is no renewal's)
        inside = [f for f in found if f.start < m.end() and m.start() < f.end]
        found = [f for f in found if f not in inside]
        start = min([m.start(), *(f.start for f in inside)])
        found.append(Found(_UNITS[unit], start, m.end(), _duration_words(1, unit)))
    return sorted(found, key=lambda f: f.start)


def _duration_words(n: float, unit: str) -> str:
    count = int(n) if float(n).is_integer() else n
    return f"{count} {unit}{'' if count == 1 else 's'}"


# --- jurisdictions -----------------------------------------------------------------------------

US_STATES = [
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
    "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky",
    "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan", "Minnesota", "Mississippi",
    "Missouri", "Montana", "Nebraska", "Nevada", "Ohio", "Oklahoma", "Oregon", "Pennsylvania",
    "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington", "Wisconsin", "Wyoming",
    "New Hampshire", "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota",
    "Rhode Island", "South Carolina", "South Dakota", "West Virginia", "District of Columbia",
]  # fmt: skip
OTHER_JURISDICTIONS = [
    "England and Wales", "England", "Scotland", "Northern Ireland", "Ireland", "United Kingdom",
    "Canada", "Ontario", "Quebec", "British Columbia", "Alberta", "Nova Scotia", "Manitoba",
    "Saskatchewan", "New Brunswick", "Australia", "New South Wales", "Victoria", "Queensland",
    "New Zealand", "Hong Kong", "Singapore", "India", "People's Republic of China", "PRC", "China",
    "Taiwan", "Japan", "Korea", "Israel", "Germany", "France", "Switzerland", "Netherlands",
    "The Netherlands", "Belgium", "Luxembourg", "Sweden", "Norway", "Denmark", "Finland", "Spain",
    "Italy", "Austria", "Portugal", "Greece", "Cyprus", "Malta", "Bermuda", "Cayman Islands",
    "British Virgin Islands", "Mexico", "Brazil", "Argentina", "Chile", "South Africa",
    "United Arab Emirates", "Dubai", "Thailand", "Malaysia", "Philippines", "Indonesia", "Vietnam",
    "Puerto Rico", "Marshall Islands", "Liberia", "Panama", "United States", "Russia", "Poland",
    "Czech Republic", "Hungary", "Turkey",
]  # fmt: skip
JURISDICTIONS = sorted(US_STATES + OTHER_JURISDICTIONS, key=len, reverse=True)
# A name as the gazetteer spells it, or in capitals ("THE LAWS OF THE STATE OF NEW YORK": many
# filed contracts set their governing-law clause in capitals); not in lower case ("turkey").
_SPELLINGS = {spelling: name for name in JURISDICTIONS for spelling in (name, name.upper())}
_JURISDICTION = re.compile(
    r"\b(?:" + "|".join(re.escape(s) for s in sorted(_SPELLINGS, key=len, reverse=True)) + r")\b"
)
# A jurisdiction named as the law that governs: "laws of the State of New York", "New York law",
# "governed by ... Delaware", as against a court's seat or an address.
_LAW_CUE = re.compile(r"\blaws?\b|\bgovern", re.I)
# Washington and Georgia are also a city and a country: only a state when the text says so nearby.
_AMBIGUOUS = {"Washington": re.compile(r"State of\s+$|Commonwealth of\s+$", re.I)}


def jurisdictions_in(text: str) -> list[Found]:
    """The jurisdictions named in `text`, in order; `value` is the name as the gazetteer spells it
    ("People's Republic of China", "New York")."""
    found = []
    for m in _JURISDICTION.finditer(text):
        name = _SPELLINGS[m.group(0)]
        cue = _AMBIGUOUS.get(name)
        if (
            cue is not None
            and not cue.search(text[max(0, m.start() - 30) : m.start()])
            and "law" not in (text[m.end() : m.end() + 6].lower())
        ):
            continue
        found.append(Found(name, m.start(), m.end(), name))
    return found


# "a corporation organized (and existing) under the laws of Delaware": where a party is
# incorporated, not the law the agreement chooses.
_INCORPORATED = re.compile(
    r"\b(?:organi[sz]ed|incorporated|existing|formed|registered|chartered|established)\b[^.;]{0,40}?"
    r"\blaws?\s+of\s+(?:the\s+)?(?:(?:state|commonwealth|province|republic|kingdom)\s+of\s+)?$",
    re.I,
)


def governing_jurisdiction(text: str) -> Found | None:
    """The jurisdiction whose law `text` says governs: the first one named within a few words after
    "law(s)" or "govern…", or just before "law" ("New York law"); None when none is named so."""
    for found in jurisdictions_in(text):
        before = text[max(0, found.start - 90) : found.start]
        after = text[found.end : found.end + 12]
        if _INCORPORATED.search(before):
            continue
        if _LAW_CUE.search(before) or re.match(r"\s*(?:law|laws)\b", after, re.I):
            return found
    return None


# --- amounts and percentages -------------------------------------------------------------------

_MAGNITUDE = r"(?:\s*(?:million|billion|thousand|[mMkK]\b))?"
AMOUNT = re.compile(
    r"(?:(?:US\s?|U\.S\.\s?|C|A|HK|S)?\$|USD\s?|EUR\s?|GBP\s?|€|£|¥|RMB\s?|CHF\s?)\s?"
    rf"\d{{1,3}}(?:,\d{{3}})*(?:\.\d+)?{_MAGNITUDE}"
    r"|\b\d{1,3}(?:,\d{3})*(?:\.\d+)?"
    + _MAGNITUDE
    + r"\s*(?:U\.S\.\s+)?(?:dollars|euros|pounds|USD|EUR|GBP)\b",
    re.I,
)
PERCENT = re.compile(r"\b\d{1,3}(?:\.\d+)?\s?(?:%|percent\b|per cent\b)", re.I)


def amounts_in(text: str) -> list[Found]:
    """The sums of money written in `text` ("$5,000", "US$ 1.2 million", "EUR 300", "500 dollars")."""
    return [Found(m.group(0).strip(), m.start(), m.end(), m.group(0).strip()) for m in AMOUNT.finditer(text)]


def percents_in(text: str) -> list[Found]:
    """The percentages written in `text` ("5%", "7.5 percent")."""
    return [Found(m.group(0).strip(), m.start(), m.end(), m.group(0).strip()) for m in PERCENT.finditer(text)]


# --- redacted and blank ------------------------------------------------------------------------

# "[***]", "[*]", "[ ]", "*****", "[REDACTED]", "$[●]", "____": what a filed copy puts for a term
# it keeps confidential or an unsigned form leaves to fill in.
REDACTION = re.compile(
    r"\[\s*\*+\s*\]|\*{3,}|\[\s*(?:redacted|omitted|confidential)[^\]]*\]|\[\s*●\s*\]|●", re.I
)
BLANK = re.compile(r"_{3,}|\[\s{0,3}\]")


def redactions_in(text: str) -> list[Found]:
    """Where `text` redacts a value ("[***]"): value is "redacted"."""
    return [Found("redacted", m.start(), m.end(), m.group(0)) for m in REDACTION.finditer(text)]


def blanks_in(text: str) -> list[Found]:
    """Where `text` leaves a value blank ("____", "[ ]"): value is "blank"."""
    return [Found("blank", m.start(), m.end(), m.group(0)) for m in BLANK.finditer(text)]
