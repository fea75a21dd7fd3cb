"""The result of extraction: text plus the page and section spans that point into it."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

PDF_MIME = "application/pdf"
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
TXT_MIME = "text/plain"
EML_MIME = "message/rfc822"
MIME_TYPES = {"pdf": PDF_MIME, "docx": DOCX_MIME, "txt": TXT_MIME, "eml": EML_MIME}


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
    kind: str  # "pdf" | "docx" | "txt" | "eml"
    mime_type: str
    pages: list[PageSpan]  # contiguous and in order; docx/txt have one page spanning everything
    sections: list[SectionSpan]  # best effort, may be empty
    encoding: str | None = None  # txt only: the encoding used to decode
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


def has_visible_text(text: str) -> bool:
    """True when `text` holds something besides whitespace and byte-order marks."""
    return any(not ch.isspace() and ch != "\ufeff" for ch in text)
