"""Plain text: decode the bytes so that every offset is an offset into the file's characters."""

from __future__ import annotations

import codecs

from rag.ingest.extract.document import TXT_MIME, ExtractedDocument, has_visible_text, single_page
from rag.ingest.extract.headings import find_headings
from ragsite.exceptions import CorruptDocument, NoExtractableText

# UTF-32 first: its little-endian BOM starts with the UTF-16 one. The "utf-16"/"utf-32" codecs drop
# the BOM, exactly as Python's open(..., encoding="utf-16") does.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Without a BOM: strict UTF-8 (a UTF-8 BOM stays in the text as "\ufeff", as open(...,
# encoding="utf-8") gives it), then Windows-1252, then Latin-1, which accepts any byte.
_FALLBACKS = ("utf-8", "cp1252", "latin-1")

# C0 controls other than tab, newline, vertical tab, form feed and carriage return, plus DEL.
_CONTROL_CHARS = {c: None for c in [*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F]}
MAX_CONTROL_RATIO = 0.01


def decode_text(data: bytes) -> tuple[str, str]:
    """(text, encoding). Raises UnicodeDecodeError when a BOM promises UTF-16/32 and lies."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding), encoding
    for encoding in _FALLBACKS:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


def looks_like_text(data: bytes) -> bool:
    """Decodable, and control characters are at most ~1% of it (binary data has ~10%)."""
    try:
        text, _ = decode_text(data)
    except UnicodeDecodeError:
        return False
    controls = len(text) - len(text.translate(_CONTROL_CHARS))
    return controls <= len(text) * MAX_CONTROL_RATIO


def extract_txt(data: bytes) -> ExtractedDocument:
    """The decoded file, unchanged except that each NUL becomes U+FFFD (see below)."""
    try:
        text, encoding = decode_text(data)
    except UnicodeDecodeError as exc:
        raise CorruptDocument(
            "The text file says it is UTF-16 or UTF-32 encoded but its content is not.",
            details={"encoding": exc.encoding},
        ) from exc
    # A few stray NULs (binary files are refused before this) are replaced one-for-one with the
    # replacement character, never deleted, so offsets stay equal to the file's character offsets
    # while downstream code (PostgreSQL text columns refuse NUL) stays safe.
    text = text.replace("\x00", "\ufffd")
    if not has_visible_text(text):
        raise NoExtractableText("No extractable text: the text file is blank.")
    return ExtractedDocument(
        text=text,
        kind="txt",
        mime_type=TXT_MIME,
        pages=single_page(text),
        sections=find_headings(text),
        encoding=encoding,
    )
