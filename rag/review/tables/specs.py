"""A table's columns: built-in clause types (rag.review.columns) or questions typed in plain words.

Stored on the table as a list of {"key": "<built-in key>"} or {"question": "<text>"} (`validated`
checks a request's list); read back as `TableColumn`s.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.review.columns import BY_KEY, PRESENCE, Column
from ragsite.exceptions import InvalidInput

MAX_COLUMNS = 50
MAX_QUESTION = 500
TYPED = "question"


@dataclass(frozen=True)
class TableColumn:
    index: int
    key: str  # the built-in key, or "q<index>" for a typed question
    label: str
    kind: str  # "presence", "value" (built-in) or "question" (typed)
    question: str
    builtin: Column | None = None

    def as_json(self) -> dict:
        return {"index": self.index, "key": self.key, "label": self.label, "kind": self.kind,
                "question": self.question}  # fmt: skip


def validated(columns) -> list[dict]:
    """A request's column list as stored; `InvalidInput` naming each bad entry."""
    if not isinstance(columns, list) or not columns:
        raise InvalidInput("Choose at least one column.", details={"columns": "A non-empty list."})
    if len(columns) > MAX_COLUMNS:
        raise InvalidInput(
            f"A table has at most {MAX_COLUMNS} columns.", details={"columns": f"At most {MAX_COLUMNS}."}
        )
    stored, errors, seen = [], {}, set()
    for index, entry in enumerate(columns):
        where = f"columns[{index}]"
        if isinstance(entry, str):  # a bare key is accepted for convenience
            entry = {"key": entry}
        if not isinstance(entry, dict) or len(entry) != 1 or not ({"key", TYPED} & set(entry)):
            errors[where] = 'One of {"key": "<built-in column>"} or {"question": "<text>"}.'
            continue
        if "key" in entry:
            key = entry["key"]
            if not isinstance(key, str) or key not in BY_KEY:
                errors[where] = "No built-in column of this key."
                continue
            value = {"key": key}
        else:
            text = entry[TYPED]
            text = " ".join(text.split()) if isinstance(text, str) else ""
            if not text or len(text) > MAX_QUESTION or "\x00" in text:
                errors[where] = f"A question of 1 to {MAX_QUESTION} characters."
                continue
            value = {TYPED: text}
        marker = tuple(value.items())
        if marker in seen:
            errors[where] = "The same column twice."
            continue
        seen.add(marker)
        stored.append(value)
    if errors:
        raise InvalidInput("Some columns are not valid.", details=errors)
    return stored


def table_columns(columns: list[dict]) -> list[TableColumn]:
    """The stored column list as `TableColumn`s (an unknown built-in key, e.g. one since renamed,
    becomes a typed question of its label so the table still reads)."""
    resolved = []
    for index, entry in enumerate(columns):
        builtin = BY_KEY.get(entry.get("key", ""))
        if builtin is not None:
            resolved.append(
                TableColumn(index, builtin.key, builtin.label, builtin.kind, builtin.question, builtin)
            )
        else:
            text = entry.get(TYPED) or str(entry.get("key", ""))
            resolved.append(TableColumn(index, f"q{index}", text, TYPED, text))
    return resolved


def is_presence(column: TableColumn) -> bool:
    return column.builtin is not None and column.kind == PRESENCE
