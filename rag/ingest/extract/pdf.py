"""PDF text per page with pypdf, page numbers kept."""

from __future__ import annotations

import io
import logging
import struct
import sys
import zlib

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError, PyPdfError

from rag.ingest.extract.document import (
    PAGE_SEPARATOR,
    PDF_MIME,
    ExtractedDocument,
    TextLimits,
    assemble_pages,
    has_visible_text,
)
from rag.ingest.extract.headings import find_headings
from rag.ingest.extract.scan import OcrOptions, read_pdf_scans
from ragsite.exceptions import CorruptDocument, DocumentTooComplex, EncryptedDocument, NoExtractableText

logger = logging.getLogger(__name__)

# What pypdf raises on malformed input besides its own errors; converted to CorruptDocument.
_PARSE_ERRORS = (
    PyPdfError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    AssertionError,
    EOFError,
    OverflowError,
    struct.error,
    zlib.error,
)


def _unlock(reader: PdfReader) -> None:
    """Owner-password-only PDFs (printing/copying restricted) open with the empty user password."""
    try:
        result = reader.decrypt("")
    except DependencyError as exc:  # an AES PDF without the `cryptography` package installed
        raise EncryptedDocument(
            "The PDF is encrypted with a method this server cannot open. Upload an unlocked copy."
        ) from exc
    if result == PasswordType.NOT_DECRYPTED:
        raise EncryptedDocument()


class _TextCapReached(Exception):
    """Raised from pypdf's text visitor to stop reading a page once the document's cap is passed."""


def _page_contents_size(page) -> int:
    """Decompressed bytes of the page's content streams (pypdf keeps a stream decoded once, so a
    stream shared by many pages is decompressed once and counted for each)."""
    contents = page.get_contents()
    return len(contents.get_data()) if contents is not None else 0


def _check_work(reader: PdfReader, limits: TextLimits) -> None:
    """Refuse, before any text is read, a PDF whose pages draw more decompressed content than
    limits.max_content_bytes: reading text costs about a second per 2 MB of content, and 40 pages
    sharing one 2 MB stream are 80 MB to read from a file of 11 KB. Stops at the first page over."""
    total = 0
    for number, page in enumerate(reader.pages, start=1):
        total += _page_contents_size(page)
        limits.check_content(total, pages=number)


def _page_text(page, number: int, budget: int) -> str:
    """The page's text; _TextCapReached as soon as it passes `budget` characters."""
    seen = 0

    def visit(text, *_args) -> None:
        nonlocal seen
        seen += len(text)
        if seen > budget:
            raise _TextCapReached

    try:
        return page.extract_text(visitor_text=visit) or ""
    except (LimitReachedError, RecursionError, MemoryError, _TextCapReached):
        raise
    except _PARSE_ERRORS as exc:
        raise CorruptDocument(
            f"Page {number} of the PDF is damaged and its text cannot be read.",
            details={"page": number},
        ) from exc


def _page_texts(reader: PdfReader, limits: TextLimits) -> list[str]:
    if reader.is_encrypted:
        _unlock(reader)
    # The declared /Count is checked before pypdf walks (flattens) a possibly enormous page tree.
    pages_root = reader.root_object["/Pages"]
    # Not .get(): dict.get bypasses pypdf's resolution of indirect objects.
    declared = pages_root["/Count"] if "/Count" in pages_root else 0  # noqa: SIM401
    if isinstance(declared, int):
        limits.check_pages(declared)
    limits.check_pages(len(reader.pages))
    _check_work(reader, limits)
    texts, total = [], 0
    for number, page in enumerate(reader.pages, start=1):
        budget = limits.max_chars - total if limits.max_chars else sys.maxsize
        try:
            text = _page_text(page, number, budget)
        except _TextCapReached:
            raise limits.too_many_chars(pages=number) from None
        texts.append(text.replace("\x00", ""))  # NUL is never meaningful text and PostgreSQL refuses it
        total += len(texts[-1])
        limits.check_chars(total, pages=number)
        total += len(PAGE_SEPARATOR)
    return texts


def extract_pdf(
    data: bytes, ocr: OcrOptions | None = None, limits: TextLimits | None = None
) -> ExtractedDocument:
    """Pages joined with a blank line; the separator belongs to no page's span. With `ocr`, the
    pages without a text layer (scans) are read by OCR (`scan.read_pdf_scans`). Over `limits`
    (pages, page content, characters: `TextLimits`) it stops reading and raises."""
    limits = limits or TextLimits()
    # A complete PDF ends with %%EOF (readers look in the last 1024 bytes, some files add padding).
    # Without it the upload was cut off, and pypdf's recovery could silently drop pages.
    if b"%%EOF" not in data[-65536:].rstrip(b"\x00\t\n\f\r ")[-1024:]:
        raise CorruptDocument(
            "The PDF file is incomplete: it may have been cut off during download or upload."
        )
    try:
        reader = PdfReader(io.BytesIO(data))
        texts = _page_texts(reader, limits)
    except FileNotDecryptedError as exc:
        raise EncryptedDocument() from exc
    except (LimitReachedError, RecursionError, MemoryError) as exc:
        raise DocumentTooComplex() from exc
    except _PARSE_ERRORS as exc:
        logger.info("pypdf could not read a PDF: %r", exc)
        raise CorruptDocument("The PDF file is damaged and cannot be read.") from exc

    confidence: dict[int, float] = {}
    if ocr is not None:
        texts, confidence = read_pdf_scans(data, texts, ocr)
    text, pages = assemble_pages(texts)
    limits.check_chars(len(text), pages=len(pages))  # with the pages read by OCR
    if not has_visible_text(text):
        message = (
            "No extractable text: OCR found no text on the PDF's pages."
            if confidence
            else "No extractable text: the PDF has no text layer (it may be a scan). "
            "Run it through OCR and upload the result."
        )
        raise NoExtractableText(message, details={"pages": len(pages)})
    return ExtractedDocument(
        text=text,
        kind="pdf",
        mime_type=PDF_MIME,
        pages=pages,
        sections=find_headings(text),
        ocr_confidence=confidence,
    )
