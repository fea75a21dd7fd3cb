"""Bytes of an uploaded file -> extracted text with page boundaries and section titles.

`detect_kind(data, filename)` judges the type from the content and checks the name agrees;
`extract(data, kind)` returns an `ExtractedDocument` whose page and section spans are character
offsets into its `text`. Both are pure functions raising `ragsite.exceptions` errors.
"""

from __future__ import annotations

from rag.ingest.extract.detect import detect_kind
from rag.ingest.extract.document import (
    DOCX_MIME,
    EML_MIME,
    PDF_MIME,
    TXT_MIME,
    ExtractedDocument,
    PageSpan,
    SectionSpan,
)
from rag.ingest.extract.docx import extract_docx
from rag.ingest.extract.email import extract_email
from rag.ingest.extract.pdf import extract_pdf
from rag.ingest.extract.txt import extract_txt
from ragsite.exceptions import EmptyFile

__all__ = [
    "DOCX_MIME",
    "EML_MIME",
    "PDF_MIME",
    "TXT_MIME",
    "ExtractedDocument",
    "PageSpan",
    "SectionSpan",
    "detect_kind",
    "extract",
]

_EXTRACTORS = {"pdf": extract_pdf, "docx": extract_docx, "txt": extract_txt, "eml": extract_email}


def extract(data: bytes, kind: str) -> ExtractedDocument:
    """Extract the text of `data`, a file of `kind` ("pdf", "docx", "txt" or "eml", from detect_kind()).

    Raises EmptyFile, CorruptDocument, EncryptedDocument, NoExtractableText or DocumentTooComplex,
    each with a message meant for the person who uploaded the file.
    """
    try:
        extractor = _EXTRACTORS[kind]
    except KeyError:
        raise ValueError(f"unknown document kind {kind!r}; use detect_kind() first") from None
    if not data:
        raise EmptyFile()
    return extractor(data)
