"""OCR for the ingestion job and the upload checks, configured from the RAG_OCR_* settings."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.conf import settings

from ragsite.exceptions import OCRUnavailable

from .extract import IMAGE_MIMES, OcrOptions
from .extract.ocr import Tesseract
from .extract.scan import image_check

# Progress while pages are read: from 1 % up to (not including) this; chunking starts at 5, but a
# scan spends nearly all of its time here, so OCR takes the extraction share and a bit more.
OCR_PROGRESS_TO = 9


def tesseract() -> Tesseract:
    """The Tesseract the settings name (RAG_OCR_TESSERACT_CMD, _LANGUAGES, _PAGE_TIMEOUT)."""
    return Tesseract(
        command=settings.RAG_OCR_TESSERACT_CMD,
        languages=settings.RAG_OCR_LANGUAGES,
        timeout=settings.RAG_OCR_PAGE_TIMEOUT,
    )


def ocr_options(on_progress: Callable[[int, str], None] | None = None) -> OcrOptions:
    """OcrOptions from the settings; `on_progress(percent, stage)` hears "OCR page 3/12"."""

    def on_page(number: int, done: int, total: int) -> None:
        stage = f"OCR page {done + 1}/{total}"
        if number != done + 1:  # a mixed PDF: say which page of the document it is
            stage = f"OCR page {number} ({done + 1}/{total})"
        on_progress(1 + (OCR_PROGRESS_TO - 1) * done // total, stage)

    return OcrOptions(
        engine=tesseract(),
        dpi=settings.RAG_OCR_DPI,
        max_pages=settings.RAG_OCR_MAX_PAGES,
        max_pixels=settings.RAG_OCR_MAX_PIXELS,
        on_page=on_page if on_progress else None,
    )


def upload_scan_check(kind: str, content: bytes) -> None:
    """Refuse an image upload over the OCR bounds (OCRLimitExceeded, 413), judged from its headers."""
    if kind in IMAGE_MIMES:
        image_check(content, max_pages=settings.RAG_OCR_MAX_PAGES, max_pixels=settings.RAG_OCR_MAX_PIXELS)


def low_confidence_pages(ocr_confidence: dict) -> dict[int, float]:
    """{page: confidence} of the pages read by OCR under RAG_OCR_LOW_CONFIDENCE, in page order."""
    threshold = settings.RAG_OCR_LOW_CONFIDENCE
    pages = {int(page): float(value) for page, value in (ocr_confidence or {}).items()}
    return {page: pages[page] for page in sorted(pages) if pages[page] < threshold}


def ocr_status() -> dict:
    """OCR for /api/v1/health: "ready" when the binary runs and has every RAG_OCR_LANGUAGES data
    file, "unavailable" otherwise (scans would fail). Checked once per process and setting."""
    return dict(_ocr_status(settings.RAG_OCR_TESSERACT_CMD, settings.RAG_OCR_LANGUAGES))


@functools.lru_cache(maxsize=4)
def _ocr_status(command: str, languages: str) -> tuple:
    report = {"engine": "tesseract", "command": command, "languages": languages}
    try:
        installed = tesseract().languages_installed()
    except (OCRUnavailable, ValueError) as exc:
        return tuple({**report, "status": "unavailable", "detail": str(exc)[:200]}.items())
    missing = [language for language in languages.split("+") if language not in installed]
    if missing:
        detail = f"no language data for {', '.join(missing)} (Debian: tesseract-ocr-<lang>)"
        return tuple({**report, "status": "unavailable", "detail": detail}.items())
    return tuple({**report, "status": "ready"}.items())
