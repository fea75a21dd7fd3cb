"""Scans made in the test from known text: pages rendered with Pillow, wrapped as image-only PDFs,
PNG/JPEG/TIFF files, and a PDF mixing a text page with a scanned one. Small pages at 100 dpi with
large type, so Tesseract reads each in a fraction of a second.

`needs_tesseract` skips a test where Tesseract is not installed, except where
LEXRAG_REQUIRE_TESSERACT (set by .ci/run) demands that OCR tests run.
"""

from __future__ import annotations

import io
import os
import shutil

import pytest
from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfReader, PdfWriter

DPI = 100
PAGE_SIZE = (850, 1100)  # letter at 100 dpi


def _tesseract_missing() -> bool:
    missing = shutil.which("tesseract") is None
    if missing and os.environ.get("LEXRAG_REQUIRE_TESSERACT"):
        pytest.fail("tesseract is not installed but LEXRAG_REQUIRE_TESSERACT demands the OCR tests")
    return missing


needs_tesseract = pytest.mark.skipif(_tesseract_missing(), reason="tesseract is not installed")

# How the blank scan fixture (tests/fixtures/scanned.pdf) fails: OCR finds no text on it, or, on a
# machine without Tesseract, OCR cannot run. Either way it fails cleanly, with its reason.
BLANK_SCAN_ERROR, BLANK_SCAN_REASON = (
    ("OCRUnavailable", "OCR")
    if shutil.which("tesseract") is None
    else ("NoExtractableText", "No extractable text")
)


def page_image(lines: list[str], *, size: tuple[int, int] = PAGE_SIZE, font_size: int = 22) -> Image.Image:
    """A white grayscale page with `lines` of black text (a blank line separates paragraphs)."""
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=font_size)
    y = 60
    for line in lines:
        draw.text((60, y), line, font=font, fill=0)
        y += int(font_size * 1.6)
    return image


def image_bytes(images: list[Image.Image], image_format: str) -> bytes:
    """`images` saved as one file: a PDF with no text layer, a (multi-page) TIFF, a PNG or a JPEG."""
    out = io.BytesIO()
    first, rest = images[0], images[1:]
    if image_format == "PDF":
        first.save(out, "PDF", resolution=DPI, save_all=True, append_images=rest)
    elif image_format == "TIFF":
        first.save(out, "TIFF", dpi=(DPI, DPI), save_all=True, append_images=rest, compression="tiff_deflate")
    else:
        first.save(out, image_format, dpi=(DPI, DPI))
    return out.getvalue()


def scanned_pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose pages are images of `pages` (lines of text each), with no text layer."""
    return image_bytes([page_image(lines) for lines in pages], "PDF")


def text_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with a real text layer (fpdf2)."""
    from fpdf import FPDF

    pdf = FPDF(format="letter")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    for line in lines:
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def joined_pdf(*parts: bytes) -> bytes:
    """The pages of several PDFs, in order, as one PDF."""
    writer = PdfWriter()
    for part in parts:
        for page in PdfReader(io.BytesIO(part)).pages:
            writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


TEXT_PAGE = [
    "MASTER SERVICES AGREEMENT",
    "This Agreement is made between Acme Corp and Globex LLC.",
    "Section 1. Services. The Supplier shall provide the Services.",
]
SCANNED_PAGE = [
    "Section 2. Payment",
    "",
    "The Customer shall pay each invoice",
    "within thirty days of receipt.",
]
SECOND_SCANNED_PAGE = [
    "Section 3. Term",
    "",
    "This Agreement continues for two years",
    "unless terminated earlier.",
]


def mixed_pdf() -> bytes:
    """Page 1 has a text layer, page 2 is a scan (an image, no text)."""
    return joined_pdf(text_pdf(TEXT_PAGE), scanned_pdf([SCANNED_PAGE]))
