"""Cells of a spreadsheet export (CSV, XLSX) made safe to open."""

from __future__ import annotations

# A spreadsheet runs a cell starting with one of these as a formula (CSV injection); tab and
# carriage return too, as some strip them before looking.
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value):
    """`value` for a CSV cell: text that a spreadsheet would run as a formula gets a leading "'"."""
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value
