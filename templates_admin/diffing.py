"""Line diffs between two states of a prompt template (version snapshots or the current row), for
the admin's version history. Pure: plain data out, which the admin template escapes when it shows it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from itertools import zip_longest

from .models import PromptTemplate

CONTEXT_LINES = 3


@dataclass(frozen=True)
class UnifiedLine:
    """One line of a unified diff: `kind` is "hunk" (an @@ header), "added", "removed" or "context"."""

    kind: str
    text: str


@dataclass(frozen=True)
class SideBySideRow:
    """One row of a side-by-side diff. `kind` is "equal", "changed", "added", "removed" or "gap" (the
    unchanged lines left out between two hunks); a line number is None where that side has no line."""

    kind: str
    old_number: int | None = None
    old_text: str = ""
    new_number: int | None = None
    new_text: str = ""


@dataclass(frozen=True)
class FieldDiff:
    name: str
    label: str
    changed: bool
    unified: tuple[UnifiedLine, ...]
    side_by_side: tuple[SideBySideRow, ...]


def _lines(text: str) -> list[str]:
    return text.splitlines()


def unified_lines(old: str, new: str, *, context: int = CONTEXT_LINES) -> tuple[UnifiedLine, ...]:
    """The unified diff of two texts, line by line, without the ---/+++ file header."""
    kinds = {"+": "added", "-": "removed", " ": "context", "@": "hunk"}
    diff = difflib.unified_diff(_lines(old), _lines(new), lineterm="", n=context)
    return tuple(UnifiedLine(kinds[line[0]], line if line[0] == "@" else line[1:]) for line in list(diff)[2:])


def side_by_side_rows(old: str, new: str, *, context: int = CONTEXT_LINES) -> tuple[SideBySideRow, ...]:
    """The side-by-side diff of two texts: changed hunks with `context` lines around them."""
    a, b = _lines(old), _lines(new)
    rows: list[SideBySideRow] = []
    for number, group in enumerate(
        difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context)
    ):
        if number:
            rows.append(SideBySideRow("gap"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(
                    SideBySideRow("equal", i + 1, a[i], j + 1, b[j])
                    for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                )
                continue
            for i, j in zip_longest(range(i1, i2), range(j1, j2)):
                kind = "changed" if i is not None and j is not None else "removed" if j is None else "added"
                rows.append(
                    SideBySideRow(
                        kind,
                        None if i is None else i + 1,
                        "" if i is None else a[i],
                        None if j is None else j + 1,
                        "" if j is None else b[j],
                    )
                )
    return tuple(rows)


def snapshot_diff(old: dict, new: dict, *, context: int = CONTEXT_LINES) -> list[FieldDiff]:
    """The diff of each editable field between two snapshots (`PromptTemplate.snapshot()` shape; a
    field missing from a snapshot counts as empty), in the model's field order."""
    diffs = []
    for name in PromptTemplate.EDITABLE_FIELDS:
        before, after = _text(old.get(name)), _text(new.get(name))
        diffs.append(
            FieldDiff(
                name=name,
                label=str(PromptTemplate._meta.get_field(name).verbose_name).capitalize(),
                changed=before != after,
                unified=unified_lines(before, after, context=context),
                side_by_side=side_by_side_rows(before, after, context=context),
            )
        )
    return diffs


def _text(value) -> str:
    # A browser posts a textarea with \r\n line endings, a built-in or an API write has \n: the same
    # text either way, so an untouched field must not diff as changed.
    return "" if value is None else str(value).replace("\r\n", "\n").replace("\r", "\n")
