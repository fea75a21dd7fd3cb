"""Scans: PDF pages without a text layer and PNG/JPEG/TIFF images, read page by page with OCR.

Rendering PDF pages uses pypdfium2 (PDFium, Chrome's PDF engine, as a self-contained wheel): it
draws exactly what a reader shows, whatever the page is made of (one scanned image, several strips,
JBIG2/CCITT images, text drawn as outlines), at the DPI we choose, and tells the page size first so
the pixel bound is checked before anything is drawn. pypdf's embedded-image extraction would miss
every page that is not one plain image, and pdftoppm is another system package to install.
Images are opened with Pillow (frames of a multi-page TIFF are pages).

Bounds (`OcrOptions`): pages to read (`max_pages`), pixels per page (`max_pixels`) and Tesseract's
time per page (the engine's timeout) — exceeding one is OCRLimitExceeded, before any OCR where it
can be known.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image, ImageOps, UnidentifiedImageError

from rag.ingest.extract.document import (
    IMAGE_MIMES,
    ExtractedDocument,
    assemble_pages,
    has_visible_text,
    visible_length,
)
from rag.ingest.extract.headings import find_headings
from rag.ingest.extract.ocr import Tesseract
from ragsite.exceptions import CorruptDocument, EncryptedDocument, NoExtractableText, OCRLimitExceeded

# A page whose text layer has fewer visible characters than this and carries an image is a scan
# with a stamp on it (a Bates number, "Page 3", a fax header): it is read by OCR, and the stamp
# with it. A page with no visible text at all is read by OCR whatever it is made of.
SPARSE_TEXT_LAYER = 40
_PDF_POINTS_PER_INCH = 72


@dataclass(frozen=True)
class OcrOptions:
    """How scans are read: the engine, the DPI PDF pages are drawn at, the bounds, and
    `on_page(number, done, total)`, called before each page is read (progress)."""

    engine: Tesseract
    dpi: int
    max_pages: int
    max_pixels: int
    on_page: Callable[[int, int, int], None] | None = None

    def __post_init__(self):
        if not 50 <= self.dpi <= 1200:
            raise ValueError("the OCR DPI must be between 50 and 1200")
        if self.max_pages < 1 or self.max_pixels < 1:
            raise ValueError("the OCR page and pixel bounds must be positive")


def _too_many_pages(count: int, limit: int) -> OCRLimitExceeded:
    return OCRLimitExceeded(
        f"The scan has {count} pages to read by OCR; at most {limit} are read per document "
        "(RAG_OCR_MAX_PAGES). Split it into parts.",
        details={"pages": count, "max_pages": limit},
    )


def _too_many_pixels(page: int, width: int, height: int, limit: int) -> OCRLimitExceeded:
    return OCRLimitExceeded(
        f"Page {page} is {width} x {height} pixels; at most {limit:,} pixels per page are read by OCR "
        "(RAG_OCR_MAX_PIXELS). Scan it at a lower resolution (300 dpi is plenty).",
        details={"page": page, "pixels": width * height, "max_pixels": limit},
    )


# --- images ---------------------------------------------------------------------------------------


def _open_image(data: bytes, max_pixels: int) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise OCRLimitExceeded(
            f"The image is too large to read by OCR: at most {max_pixels:,} pixels per page "
            "(RAG_OCR_MAX_PIXELS).",
            details={"max_pixels": max_pixels},
        ) from exc
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise CorruptDocument("The image file is damaged and cannot be read.") from exc


def _frame_sizes(image: Image.Image, max_pages: int) -> list[tuple[int, int]]:
    """(width, height) of each frame, stopping past `max_pages` (a TIFF can declare thousands)."""
    sizes = []
    for index in range(min(getattr(image, "n_frames", 1), max_pages + 1)):
        image.seek(index)
        sizes.append(image.size)
    image.seek(0)
    return sizes


def image_check(data: bytes, *, max_pages: int, max_pixels: int) -> None:
    """Refuse an image over the bounds from its headers alone (nothing is decoded): for uploads.
    An image that cannot be parsed is left for the job to report."""
    try:
        image = _open_image(data, max_pixels)
        sizes = _frame_sizes(image, max_pages)
    except (CorruptDocument, OSError, ValueError, EOFError):
        return
    if len(sizes) > max_pages:
        raise _too_many_pages(getattr(image, "n_frames", len(sizes)), max_pages)
    for number, (width, height) in enumerate(sizes, start=1):
        if width * height > max_pixels:
            raise _too_many_pixels(number, width, height, max_pixels)


def _image_dpi(image: Image.Image) -> int | None:
    """The resolution the file declares, if it is plausible (else Tesseract estimates it)."""
    dpi = image.info.get("dpi")
    try:
        value = round(float(dpi[0]))
    except (TypeError, ValueError, IndexError):
        return None
    return value if 70 <= value <= 1200 else None


def extract_image(data: bytes, kind: str, ocr: OcrOptions) -> ExtractedDocument:
    """Every frame of a PNG, JPEG or (multi-page) TIFF read by OCR, one page each."""
    image = _open_image(data, ocr.max_pixels)
    sizes = _frame_sizes(image, ocr.max_pages)
    if len(sizes) > ocr.max_pages:
        raise _too_many_pages(getattr(image, "n_frames", len(sizes)), ocr.max_pages)
    texts, confidence = [], {}
    for number, (width, height) in enumerate(sizes, start=1):
        if width * height > ocr.max_pixels:
            raise _too_many_pixels(number, width, height, ocr.max_pixels)
        if ocr.on_page:
            ocr.on_page(number, number - 1, len(sizes))
        try:
            image.seek(number - 1)
            frame = ImageOps.exif_transpose(image)  # photos of pages taken sideways
            frame.load()
        except (OSError, ValueError, EOFError) as exc:
            raise CorruptDocument(f"Page {number} of the image is damaged and cannot be read.") from exc
        page = ocr.engine.run(frame, dpi=_image_dpi(image), page=number)
        texts.append(page.text)
        confidence[number] = page.confidence
    return _scanned_document(texts, confidence, IMAGE_MIMES[kind], kind)


# --- PDF pages ------------------------------------------------------------------------------------


def _open_pdf(data: bytes) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise EncryptedDocument() from exc
        raise CorruptDocument("The PDF file is damaged and its pages cannot be drawn for OCR.") from exc


def _has_image(page: pdfium.PdfPage) -> bool:
    return next(page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,)), None) is not None


def pages_to_read(pdf: pdfium.PdfDocument, texts: list[str]) -> list[int]:
    """Numbers (1-based) of the pages whose text layer is missing, or a mere stamp on a scan."""
    numbers = []
    for number, text in enumerate(texts, start=1):
        visible = visible_length(text)
        if visible == 0 or (visible < SPARSE_TEXT_LAYER and _has_image(pdf[number - 1])):
            numbers.append(number)
    return numbers


def read_pdf_scans(data: bytes, texts: list[str], ocr: OcrOptions) -> tuple[list[str], dict[int, float]]:
    """`texts` (the text layer, one string a page) with the scanned pages' text read by OCR, and the
    confidence of each page read. All bounds are checked before the first page is read. A PDF whose
    every page has a real text layer is returned as it is, without PDFium even opening it."""
    if all(visible_length(text) >= SPARSE_TEXT_LAYER for text in texts):
        return texts, {}
    pdf = _open_pdf(data)
    try:
        numbers = pages_to_read(pdf, texts)
        if len(numbers) > ocr.max_pages:
            raise _too_many_pages(len(numbers), ocr.max_pages)
        scale = ocr.dpi / _PDF_POINTS_PER_INCH
        for number in numbers:
            width, height = (round(side * scale) for side in pdf[number - 1].get_size())
            if width * height > ocr.max_pixels:
                raise _too_many_pixels(number, width, height, ocr.max_pixels)
        texts, confidence = list(texts), {}
        for done, number in enumerate(numbers):
            if ocr.on_page:
                ocr.on_page(number, done, len(numbers))
            bitmap = pdf[number - 1].render(scale=scale, grayscale=True, may_draw_forms=True)
            page = ocr.engine.run(bitmap.to_pil(), dpi=ocr.dpi, page=number)
            texts[number - 1], confidence[number] = page.text, page.confidence
        return texts, confidence
    finally:
        pdf.close()


def _scanned_document(
    texts: list[str], confidence: dict[int, float], mime: str, kind: str
) -> ExtractedDocument:
    text, pages = assemble_pages(texts)
    if not has_visible_text(text):
        raise NoExtractableText(
            "No extractable text: OCR found no text in the image.", details={"pages": len(pages)}
        )
    return ExtractedDocument(
        text=text,
        kind=kind,
        mime_type=mime,
        pages=pages,
        sections=find_headings(text),
        ocr_confidence=confidence,
    )
