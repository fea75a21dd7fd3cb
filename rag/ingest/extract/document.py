"""The result of extraction: text plus the page and section spans that point into it."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ragsite.exceptions import DocumentTooComplex, DocumentTooLarge

PDF_MIME = "application/pdf"
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
TXT_MIME = "text/plain"
EML_MIME = "message/rfc822"
# Scans read by OCR (scan.py), by kind.
IMAGE_MIMES = {"png": "image/png", "jpeg": "image/jpeg", "tiff": "image/tiff"}
MIME_TYPES = {"pdf": PDF_MIME, "docx": DOCX_MIME, "txt": TXT_MIME, "eml": EML_MIME, **IMAGE_MIMES}
PAGE_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class TextLimits:
    """How much one document may yield, whatever its size on disk (a 10 KB PDF can draw 80 MB of
    text): characters of text, all pages together; pages; and for a PDF the decompressed page
    content read to find them, counted once per page that draws it (what reading costs).
    Extractors stop as soon as a limit is passed rather than measuring afterwards."""

    max_chars: int = 5_000_000
    max_pages: int = 5_000
    max_content_bytes: int = 40 * 1024 * 1024

    def check_chars(self, chars: int, *, pages: int | None = None) -> None:
        """DocumentTooLarge once `chars` (extracted so far, from `pages` pages) passes max_chars."""
        if self.max_chars and chars > self.max_chars:
            raise self.too_many_chars(pages=pages)

    def too_many_chars(self, *, pages: int | None = None) -> DocumentTooLarge:
        """The error of a document found to yield more than max_chars (within its first `pages`)."""
        read = f" within its first {pages:,} pages" if pages else ""
        return DocumentTooLarge(
            f"The document yields more than {self.max_chars:,} characters of text{read}; at most "
            f"{self.max_chars:,} are indexed per document (RAG_MAX_DOCUMENT_CHARS). Split it into "
            "smaller files.",
            details={"max_chars": self.max_chars, **({"pages_read": pages} if pages else {})},
        )

    def check_pages(self, pages: int) -> None:
        """DocumentTooComplex when the document has more than max_pages pages."""
        if self.max_pages and pages > self.max_pages:
            raise DocumentTooComplex(
                f"The document has {pages} pages; at most {self.max_pages} pages can be processed "
                "(RAG_MAX_DOCUMENT_PAGES). Split it into parts.",
                details={"pages": pages, "max_pages": self.max_pages},
            )

    def check_content(self, size: int, *, pages: int) -> None:
        """DocumentTooLarge once a PDF's first `pages` pages draw more than max_content_bytes."""
        if self.max_content_bytes and size > self.max_content_bytes:
            mb = self.max_content_bytes / 1048576
            raise DocumentTooLarge(
                f"The PDF's first {pages:,} pages draw {size / 1048576:,.1f} MB of page content once "
                f"decompressed; at most {mb:,.0f} MB is read per document (RAG_MAX_PDF_CONTENT_MB). "
                "Split it into smaller files.",
                details={"max_content_bytes": self.max_content_bytes, "pages": pages},
            )


@dataclass(frozen=True)
class PageSpan:
    number: int  # 1-based page number
    start: int  # char offset into ExtractedDocument.text (inclusive)
    end: int  # char offset (exclusive)


@dataclass(frozen=True)
class SectionSpan:
    title: str
    start: int  # char offset where the section (its heading) begins


@dataclass(frozen=True)
class ExtractedDocument:
    text: str  # the extracted text; all offsets refer to this string
    kind: str  # "pdf" | "docx" | "txt" | "eml" | "png" | "jpeg" | "tiff"
    mime_type: str
    pages: list[PageSpan]  # contiguous and in order; docx/txt have one page spanning everything
    sections: list[SectionSpan]  # best effort, may be empty
    encoding: str | None = None  # txt only: the encoding used to decode
    # Pages read by OCR: {page number: mean word confidence 0-100}; empty when none was.
    ocr_confidence: dict[int, float] = field(default_factory=dict)
    title: str = ""  # eml only: the title the file states (its subject, sender and date)

    def page_at(self, offset: int) -> int:
        """The number of the page containing char `offset` (0 <= offset < len(text)).

        Characters of the separator between two pages belong to the page before it.
        """
        if not 0 <= offset < len(self.text):
            raise ValueError(f"offset {offset} is outside the text (length {len(self.text)})")
        index = bisect.bisect_right(self.pages, offset, key=lambda page: page.start) - 1
        return self.pages[max(index, 0)].number


def single_page(text: str) -> list[PageSpan]:
    """DOCX and TXT have no reliable page breaks: one page covers the whole text."""
    return [PageSpan(number=1, start=0, end=len(text))]


def assemble_pages(texts: list[str]) -> tuple[str, list[PageSpan]]:
    """Pages' texts joined with a blank line, and each page's span; the separator belongs to no page."""
    pages, parts, offset = [], [], 0
    for number, text in enumerate(texts, start=1):
        if number > 1:
            parts.append(PAGE_SEPARATOR)
            offset += len(PAGE_SEPARATOR)
        pages.append(PageSpan(number=number, start=offset, end=offset + len(text)))
        parts.append(text)
        offset += len(text)
    return "".join(parts), pages


def visible_length(text: str) -> int:
    """How many characters of `text` are not whitespace or byte-order marks."""
    return sum(1 for ch in text if not ch.isspace() and ch != "\ufeff")


def has_visible_text(text: str) -> bool:
    """True when `text` holds something besides whitespace and byte-order marks."""
    return any(not ch.isspace() and ch != "\ufeff" for ch in text)
