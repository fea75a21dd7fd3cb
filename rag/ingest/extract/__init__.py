"""Bytes of an uploaded file -> extracted text with page boundaries and section titles.

`detect_kind(data, filename)` judges the type from the content and checks the name agrees;
`extract(data, kind, ocr=...)` returns an `ExtractedDocument` whose page and section spans are
character offsets into its `text`; scans (PDF pages without text, PNG/JPEG/TIFF images) are read by
OCR when `ocr` (scan.OcrOptions: Tesseract, DPI, bounds, progress) is given. Both raise
`ragsite.exceptions` errors and touch nothing but their inputs (and the Tesseract they are given).
"""

from __future__ import annotations

from rag.ingest.extract.detect import detect_kind
from rag.ingest.extract.document import (
    DOCX_MIME,
    EML_MIME,
    IMAGE_MIMES,
    PDF_MIME,
    TXT_MIME,
    ExtractedDocument,
    PageSpan,
    SectionSpan,
    TextLimits,
)
from rag.ingest.extract.docx import extract_docx
from rag.ingest.extract.email import extract_email
from rag.ingest.extract.pdf import extract_pdf
from rag.ingest.extract.scan import OcrOptions, extract_image
from rag.ingest.extract.txt import extract_txt
from ragsite.exceptions import EmptyFile, OCRUnavailable

__all__ = [
    "DOCX_MIME",
    "EML_MIME",
    "IMAGE_MIMES",
    "PDF_MIME",
    "TXT_MIME",
    "ExtractedDocument",
    "OcrOptions",
    "PageSpan",
    "SectionSpan",
    "TextLimits",
    "detect_kind",
    "extract",
]

_EXTRACTORS = {"docx": extract_docx, "txt": extract_txt, "eml": extract_email}


def extract(
    data: bytes, kind: str, *, ocr: OcrOptions | None = None, limits: TextLimits | None = None
) -> ExtractedDocument:
    """Extract the text of `data`, a file of `kind` (from detect_kind()); scans are read by OCR
    with `ocr` (without it, a PDF's pages without text stay empty and an image is OCRUnavailable).
    `limits` (default: TextLimits()) caps the text and pages one document may yield; a PDF, whose
    text can be many times its size, stops reading as soon as it passes them.

    Raises EmptyFile, CorruptDocument, EncryptedDocument, NoExtractableText, DocumentTooComplex,
    DocumentTooLarge, OCRUnavailable or OCRLimitExceeded, each with a message meant for the person
    who uploaded the file.
    """
    if kind not in _EXTRACTORS and kind not in IMAGE_MIMES and kind != "pdf":
        raise ValueError(f"unknown document kind {kind!r}; use detect_kind() first")
    if not data:
        raise EmptyFile()
    limits = limits or TextLimits()
    if kind == "pdf":
        return extract_pdf(data, ocr, limits)
    if kind in IMAGE_MIMES:
        if ocr is None:
            raise OCRUnavailable("Images are read by OCR, which this extraction was not given.")
        extracted = extract_image(data, kind, ocr)
    else:
        extracted = _EXTRACTORS[kind](data)
    # Text, DOCX (its own unzip limits) and e-mail yield at most about their size: measured after.
    limits.check_chars(len(extracted.text))
    limits.check_pages(len(extracted.pages))
    return extracted
