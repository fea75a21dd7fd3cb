"""PDF text per page with pypdf, page numbers kept."""

from __future__ import annotations

import io
import logging
import struct
import zlib

from pypdf import PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError, PyPdfError

from rag.ingest.extract.document import PDF_MIME, ExtractedDocument, assemble_pages, has_visible_text
from rag.ingest.extract.headings import find_headings
from rag.ingest.extract.scan import OcrOptions, read_pdf_scans
from ragsite.exceptions import CorruptDocument, DocumentTooComplex, EncryptedDocument, NoExtractableText

logger = logging.getLogger(__name__)

MAX_PAGES = 5000
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


def _too_many_pages(count: int) -> DocumentTooComplex:
    return DocumentTooComplex(
        f"The PDF has {count} pages; at most {MAX_PAGES} pages can be processed. Split it into parts.",
        details={"pages": count, "max_pages": MAX_PAGES},
    )


def _page_texts(reader: PdfReader) -> list[str]:
    if reader.is_encrypted:
        _unlock(reader)
    # The declared /Count is checked before pypdf walks (flattens) a possibly enormous page tree.
    pages_root = reader.root_object["/Pages"]
    # Not .get(): dict.get bypasses pypdf's resolution of indirect objects.
    declared = pages_root["/Count"] if "/Count" in pages_root else 0  # noqa: SIM401
    if isinstance(declared, int) and declared > MAX_PAGES:
        raise _too_many_pages(declared)
    count = len(reader.pages)
    if count > MAX_PAGES:
        raise _too_many_pages(count)
    texts = []
    for number, page in enumerate(reader.pages, start=1):
        try:
            text = page.extract_text() or ""
        except (LimitReachedError, RecursionError, MemoryError):
            raise
        except _PARSE_ERRORS as exc:
            raise CorruptDocument(
                f"Page {number} of the PDF is damaged and its text cannot be read.",
                details={"page": number},
            ) from exc
        texts.append(text.replace("\x00", ""))  # NUL is never meaningful text and PostgreSQL refuses it
    return texts


def extract_pdf(data: bytes, ocr: OcrOptions | None = None) -> ExtractedDocument:
    """Pages joined with a blank line; the separator belongs to no page's span. With `ocr`, the
    pages without a text layer (scans) are read by OCR (`scan.read_pdf_scans`)."""
    # A complete PDF ends with %%EOF (readers look in the last 1024 bytes, some files add padding).
    # Without it the upload was cut off, and pypdf's recovery could silently drop pages.
    if b"%%EOF" not in data[-65536:].rstrip(b"\x00\t\n\f\r ")[-1024:]:
        raise CorruptDocument(
            "The PDF file is incomplete: it may have been cut off during download or upload."
        )
    try:
        reader = PdfReader(io.BytesIO(data))
        texts = _page_texts(reader)
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
