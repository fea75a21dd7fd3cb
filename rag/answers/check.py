"""Whether the values an answer states come from the passages it cites.

A model — Claude, a local one, or a misread by the offline provider — can state a date, an amount,
a percentage or a jurisdiction its quote does not give ("The cap is $2 million [1]" citing a
clause that says "$1 million"). Content-word overlap does not catch that (one number differs);
this does: every such value in a cited claim must be written in the cited passages, or, for a
date, follow from a date and a length they write ("five years from October 31, 2019" gives 31
October 2024: the arithmetic a lawyer expects shown).
"""

from __future__ import annotations

import re
from datetime import date

from .dates import after
from .values import amounts_in, dates_in, governing_jurisdiction, lengths_in, percents_in


def unsupported_values(claim: str, passages: list[str]) -> list[str]:
    """The values `claim` states that `passages` (the texts it cites) do not give, as written in
    the claim; [] when every one is given (or the claim states none)."""
    text = " ".join(passages)
    missing = []
    written = {found.value for found in dates_in(text)}
    reachable = written | _computed(written, text)
    missing += [d.text for d in dates_in(claim) if d.value not in reachable]
    numbers = _numbers(text)
    missing += [a.text for a in amounts_in(claim) + percents_in(claim) if _number(a.text) not in numbers]
    law = governing_jurisdiction(claim)
    if law is not None and not re.search(r"\b" + re.escape(str(law.value)) + r"\b", text, re.I):
        missing.append(law.text)
    return missing


def _computed(starts: set, text: str) -> set[date]:
    """The dates a length written in `text` reaches from a date written there."""
    return {after(start, count, unit) for count, unit in lengths_in(text) for start in starts}


_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _number(text: str) -> str:
    """The number a value is written with, commas and a zero fraction dropped ("$5,000.00" → "5000")."""
    found = _DIGITS.search(text)
    if found is None:
        return ""
    number = found.group(0).replace(",", "")
    return number[:-3] if number.endswith(".00") else number


def _numbers(text: str) -> set[str]:
    return {_number(match.group(0)) for match in _DIGITS.finditer(text)}
