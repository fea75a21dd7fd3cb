"""Text normalization for embedding and keyword search, with an exact offset map back to the source.

Stored document text is never changed; chunk spans point into it. What gets embedded and indexed is
`normalize(chunk_text).text`, and `NormalizedText.to_source()` turns a span of the normalized text
(a snippet, a highlight) back into the source span that produced it.

Rules, applied in one pass:
- whitespace (anything `str.isspace()` calls whitespace: tabs, form feeds, "\\r\\n", non-breaking and
  other Unicode spaces, U+2028/U+2029) runs collapse to one " "; leading and trailing runs go;
- format and control characters (BOM, soft hyphen, zero-width space/joiners, bidi marks, C0/C1
  controls) are dropped;
- a word hyphenated across a line break is joined when the next line starts in lower case
  ("agree-\\nment" -> "agreement"; a soft hyphen at a line break always joins);
- every other character goes through NFKC when that gives exactly one character (full-width forms,
  long s -> "s"), the U+FB00-U+FB06 family of ligatures is expanded, curly quotes become straight quotes and
  U+2010/U+2011 hyphens become "-". NFKC results that would add spaces or combining marks (or change
  length otherwise) are left alone, so NFKC never composes across characters.

Every normalized character comes from exactly one source character (`offsets`); a ligature's
expansion shares its source character, so a span that cuts a ligature in half maps to the whole
ligature. A collapsed whitespace run maps to its first whitespace character. Linear time: the regex
engine scans for the few special characters and ordinary text is copied in slices (2 MB of
contract text in about 0.1 s; 0.35 s when every line has several whitespace runs to collapse).
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from dataclasses import dataclass
from functools import lru_cache

# Not NFKC, but what a legal text's keyword search wants.
_EXTRA_TRANSLATIONS = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
    "\u2010": "-",
    "\u2011": "-",
}
# Multi-character results accepted on purpose: PDF extraction leaves these ligatures inside words.
_EXPANSIONS = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
}
_ASCII_REMOVED = "".join(chr(c) for c in range(0x80) if chr(c) < " " and not chr(c).isspace()) + "\x7f"
_HYPHENS = "-\u2010\u2011"
_SOFT_HYPHEN = "\u00ad"


@dataclass(frozen=True)
class NormalizedText:
    """`text` plus `offsets`: offsets[i] is the source index of text[i]; offsets[-1] == len(source)."""

    text: str
    offsets: array

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """The source span [start, end) whose characters produced normalized text[start:end].

        The result starts at the first contributing source character and ends right after the last
        one, so `normalize(source[a:b]).text == text[start:end].strip(" ")` (modulo a ligature cut in
        half, which maps to the whole ligature). An empty span maps to an empty source span.
        """
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(f"span [{start}, {end}) is outside the normalized text ({len(self.text)} chars)")
        if start == end:
            return self.offsets[start], self.offsets[start]
        return self.offsets[start], self.offsets[end - 1] + 1


@lru_cache(maxsize=4096)
def _classify(char: str) -> str | None:
    """'' to drop the character, a replacement string, or None to keep it as it is."""
    if char in _EXPANSIONS:
        return _EXPANSIONS[char]
    if char in _EXTRA_TRANSLATIONS:
        return _EXTRA_TRANSLATIONS[char]
    if unicodedata.category(char) in ("Cc", "Cf"):
        return ""
    nfkc = unicodedata.normalize("NFKC", char)
    if nfkc == char or len(nfkc) != 1 or nfkc.isspace() or unicodedata.combining(nfkc):
        return None
    if unicodedata.category(nfkc) in ("Cc", "Cf"):
        return None
    return nfkc


_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_WHITESPACE = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())  # all of it


@lru_cache(maxsize=128)
def _gap_pattern(removed: str) -> re.Pattern[str]:
    """Runs of whitespace and `removed` characters, except a lone " " (already normal).

    It starts with a character class, so the regex engine skips ordinary text without trying the
    pattern at every position.
    """
    rm = re.escape(removed)
    return re.compile(rf"[\s{rm}](?:(?<=[^ ])|(?=[\s{rm}]))[\s{rm}]*")


@lru_cache(maxsize=128)
def _expanded_pattern(expanded: str) -> re.Pattern[str]:
    return re.compile(f"[{re.escape(expanded)}]")


_IDENTITY_CACHE_LIMIT = 1 << 23
_identity = array("i")


def _identity_offsets(n: int) -> array:
    """array("i", range(n)) or longer; slices of it are copied with memcpy instead of built one
    int at a time. Cached (up to 32 MB) because most normalized text is the source unchanged."""
    global _identity
    current = _identity
    if len(current) >= n:
        return current
    grown = array("i", range(max(n, 2 * len(current), 4096)))
    if len(grown) <= _IDENTITY_CACHE_LIMIT:
        _identity = grown
    return grown


def normalize(source: str) -> NormalizedText:
    """Normalize `source` for embedding and keyword search, keeping a map back to `source`."""
    if not isinstance(source, str):
        raise TypeError(f"normalize() needs a str, not {type(source).__name__}")
    removed = [_ASCII_REMOVED]
    expanded = []  # characters whose replacement is longer than one character (ligatures)
    one_to_one: dict[int, str] = {}  # the rest: applied with str.translate, offsets unchanged
    for char in set(source):
        if char >= "\x80" and not char.isspace():
            replacement = _classify(char)
            if replacement == "":
                removed.append(char)
            elif replacement is not None:
                if len(replacement) == 1:
                    one_to_one[ord(char)] = replacement
                else:
                    expanded.append(char)
    removed_chars = "".join(sorted(removed))

    # Leading and trailing whitespace/removable characters produce nothing: work inside [lo, hi).
    blank = _WHITESPACE + removed_chars
    lo = len(source) - len(source.lstrip(blank))
    hi = len(source.rstrip(blank)) if lo < len(source) else lo

    identity = _identity_offsets(len(source) + 1)
    pieces: list[str] = []
    offsets = array("i")
    find_expanded = _expanded_pattern("".join(sorted(expanded))).finditer if expanded else None

    def copy(a: int, b: int) -> None:
        """Emit source[a:b], which holds no whitespace runs and no removable characters."""
        if find_expanded is not None:
            for match in find_expanded(source, a, b):
                t = match.start()
                pieces.append(source[a:t])
                offsets.extend(identity[a:t])
                replacement = _classify(source[t])
                pieces.append(replacement)
                offsets.extend(array("i", [t]) * len(replacement))
                a = t + 1
        pieces.append(source[a:b])
        offsets.extend(identity[a:b])

    pos = lo
    for match in _gap_pattern(removed_chars).finditer(source, lo, hi):
        a, b = match.span()
        space = a if source[a].isspace() else _first_space(source, a, b)
        if (
            space >= 0
            and (source[a - 1] in _HYPHENS or source[a] == _SOFT_HYPHEN)
            and _is_hyphen_break(source, lo, a, b)
        ):
            space = -1  # join the words
            if source[a] != _SOFT_HYPHEN:
                a -= 1  # and drop the "-" before the break
        if a > pos:
            copy(pos, a)
        pos = b
        if space >= 0:
            pieces.append(" ")
            offsets.append(space)
    if pos < hi:
        copy(pos, hi)
    offsets.append(len(source))
    text = "".join(pieces)
    return NormalizedText(text=text.translate(one_to_one) if one_to_one else text, offsets=offsets)


def _is_hyphen_break(source: str, lo: int, a: int, b: int) -> bool:
    """Whether the gap source[a:b] is the line break of a word hyphenated across lines."""
    if source[a] == _SOFT_HYPHEN:
        return (
            a > lo
            and source[a - 1].isalpha()
            and source[b].isalpha()
            and bool(_LINE_BREAK.search(source, a, b))
        )
    return (
        a - 2 >= lo
        and source[a - 1] in _HYPHENS
        and source[a - 2].isalpha()
        and source[b].islower()
        and bool(_LINE_BREAK.search(source, a, b))
    )


def _first_space(source: str, a: int, b: int) -> int:
    """Index of the first whitespace character in source[a:b], or -1."""
    for i in range(a, b):
        if source[i].isspace():
            return i
    return -1
