"""Titles a lawyer recognises, derived from a contract's own opening.

`derive_title(text, fallback)` reads the first few thousand characters of extracted text and
returns "<document type> — <party> / <party>", e.g. "Distributor Agreement — Tripath Technology /
Uniquest": the heading in title case (casing.py, heading.py), then the parties' short names with
their legal form dropped (parties.py). Without parties it is the heading alone; without a heading,
`fallback` (the title the file name gives, `filename_title`). Pure functions, no database.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..normalize import normalize
from .casing import known_spellings
from .heading import find_heading
from .parties import find_parties

OPENING_CHARS = 4000  # the title page and preamble; tables of contents push some preambles far
MAX_TITLE_CHARS = 300  # Document.title's length
_DASH, _SEPARATOR = " — ", " / "


@dataclass(frozen=True)
class TitleParts:
    """What the opening of a document says about it: its heading ("" if none) and parties."""

    heading: str
    parties: tuple[str, ...]


def title_parts(text: str) -> TitleParts:
    """The heading and parties found in the opening of `text` (extracted document text)."""
    opening = normalize(text[:OPENING_CHARS]).text
    known = known_spellings(opening)
    heading, heading_end = find_heading(opening, known)
    if not heading:
        return TitleParts("", ())
    return TitleParts(heading, tuple(find_parties(opening, known, heading_end)))


def filename_title(filename: str) -> str:
    """The title a file name gives: the name without its extension ("msa v3.pdf" -> "msa v3")."""
    return filename.rsplit(".", 1)[0][:MAX_TITLE_CHARS] or filename[:MAX_TITLE_CHARS]


def derive_title(text: str, fallback: str) -> str:
    """A title for a document whose user gave none: "Sponsorship Agreement — Jaguars / ARC Group"
    from its heading and parties, the heading alone when no party is found, `fallback` when the
    text has no heading."""
    parts = title_parts(text)
    if not parts.heading:
        return fallback
    title = parts.heading
    if parts.parties:
        title += _DASH + _SEPARATOR.join(parts.parties)
    return title[:MAX_TITLE_CHARS].rstrip()


def shown_title(*, text_title: str, filename: str, confidential: bool) -> tuple[str, str]:
    """(title, title source) of a document the user did not title, from the title its text gives
    (`text_title`, "" when none) and its file name: a confidential document is titled by its file
    name, as its title is shown to the whole firm and its text is not ("file_name" or "text",
    rag.models.TitleSource's values)."""
    fallback = filename_title(filename)
    if confidential or not text_title or text_title == fallback:
        return fallback, "file_name"
    return text_title[:MAX_TITLE_CHARS], "text"
