"""OCR of scans with the real Tesseract: scanned and mixed PDFs, PNG/JPEG/TIFF, bounds, failures."""

from __future__ import annotations

import pytest

from rag.ingest.extract import IMAGE_MIMES, OcrOptions, detect_kind, extract
from rag.ingest.extract.ocr import Tesseract, parse_tsv
from rag.ingest.extract.scan import image_check
from ragsite.exceptions import (
    CorruptDocument,
    NoExtractableText,
    OCRLimitExceeded,
    OCRUnavailable,
    UnsupportedMediaType,
)
from tests.scans import (
    SCANNED_PAGE,
    SECOND_SCANNED_PAGE,
    TEXT_PAGE,
    image_bytes,
    mixed_pdf,
    needs_tesseract,
    page_image,
    scanned_pdf,
    text_pdf,
)


def squash(text: str) -> str:
    return " ".join(text.split())


def options(
    *, command="tesseract", timeout=60.0, max_pages=10, max_pixels=10_000_000, seen=None
) -> OcrOptions:
    """OcrOptions over the real Tesseract; `seen` collects every on_page call."""
    on_page = (lambda *call: seen.append(call)) if seen is not None else None
    engine = Tesseract(command=command, languages="eng", timeout=timeout)
    return OcrOptions(engine=engine, dpi=100, max_pages=max_pages, max_pixels=max_pixels, on_page=on_page)


def assert_pages_index_the_text(document) -> None:
    """Pages are contiguous spans of the text with a blank line between them, as for text PDFs."""
    for before, after in zip(document.pages, document.pages[1:], strict=False):
        assert document.text[before.end : after.start] == "\n\n"
    assert document.pages[0].start == 0 and document.pages[-1].end == len(document.text)


# --- the TSV reader and the engine's configuration ---------------------------------------------------

TSV_HEADER = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"


def tsv_word(block: int, paragraph: int, line: int, conf: float, text: str) -> str:
    return f"5\t1\t{block}\t{paragraph}\t{line}\t1\t0\t0\t1\t1\t{conf}\t{text}\n"


def test_tsv_words_become_lines_and_paragraphs_with_their_mean_confidence():
    tsv = (
        TSV_HEADER
        + "1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t\n"
        + tsv_word(1, 1, 1, 90, "Section")
        + tsv_word(1, 1, 1, 80, '"2."')
        + tsv_word(1, 1, 2, 70, "Payment")
        + tsv_word(1, 1, 2, 95, " ")  # an empty word is not a word
        + tsv_word(2, 1, 1, 60, "Net")
    )
    page = parse_tsv(tsv)
    assert page.text == 'Section "2."\nPayment\n\nNet'
    assert page.confidence == 75.0


def test_no_words_is_empty_text_with_zero_confidence():
    assert parse_tsv(TSV_HEADER) == parse_tsv("") == parse_tsv(TSV_HEADER + tsv_word(1, 1, 1, -1, ""))
    assert parse_tsv("").text == "" and parse_tsv("").confidence == 0.0


@pytest.mark.parametrize(
    "config",
    [
        {"command": "", "languages": "eng", "timeout": 5},
        {"command": "tesseract", "languages": "eng; rm -rf", "timeout": 5},
        {"command": "tesseract", "languages": "", "timeout": 5},
        {"command": "tesseract", "languages": "eng", "timeout": 0},
    ],
)
def test_invalid_engine_configuration_is_refused(config):
    with pytest.raises(ValueError):
        Tesseract(**config)


@pytest.mark.parametrize(("dpi", "max_pages", "max_pixels"), [(10, 1, 1), (300, 0, 1), (300, 1, 0)])
def test_invalid_ocr_options_are_refused(dpi, max_pages, max_pixels):
    engine = Tesseract(command="tesseract", languages="eng", timeout=5)
    with pytest.raises(ValueError):
        OcrOptions(engine=engine, dpi=dpi, max_pages=max_pages, max_pixels=max_pixels)


# --- what is read ------------------------------------------------------------------------------------


@needs_tesseract
def test_a_scanned_pdf_is_read_page_by_page():
    seen = []
    document = extract(scanned_pdf([SCANNED_PAGE, SECOND_SCANNED_PAGE]), "pdf", ocr=options(seen=seen))
    assert [page.number for page in document.pages] == [1, 2]
    first = document.text[document.pages[0].start : document.pages[0].end]
    second = document.text[document.pages[1].start : document.pages[1].end]
    assert "The Customer shall pay each invoice within thirty days of receipt." in squash(first)
    assert "This Agreement continues for two years unless terminated earlier." in squash(second)
    assert sorted(document.ocr_confidence) == [1, 2]
    assert all(80 <= value <= 100 for value in document.ocr_confidence.values())
    assert seen == [(1, 0, 2), (2, 1, 2)]  # progress before each page
    assert document.kind == "pdf" and document.mime_type == "application/pdf"
    assert [section.title for section in document.sections][:1] == ["Section 2. Payment"]
    assert_pages_index_the_text(document)


@needs_tesseract
def test_a_mixed_pdf_reads_only_the_page_without_text():
    seen = []
    document = extract(mixed_pdf(), "pdf", ocr=options(seen=seen))
    text_layer = extract(text_pdf(TEXT_PAGE), "pdf")  # page 1 alone, no OCR
    assert document.text[document.pages[0].start : document.pages[0].end] == text_layer.text
    assert list(document.ocr_confidence) == [2]
    assert seen == [(2, 0, 1)]
    scanned = document.text[document.pages[1].start : document.pages[1].end]
    assert "within thirty days of receipt." in squash(scanned)
    assert_pages_index_the_text(document)


@needs_tesseract
def test_a_scan_with_a_stamp_in_its_text_layer_is_still_read():
    """A Bates number added as text on a scanned page must not hide the scan from OCR."""
    from fpdf import FPDF

    pdf = FPDF(format="letter")
    pdf.add_page()
    pdf.image(page_image(SCANNED_PAGE), x=0, y=0, w=pdf.w)
    pdf.set_font("Helvetica", size=8)
    pdf.text(170, 270, "ACME000123")
    document = extract(bytes(pdf.output()), "pdf", ocr=options())
    assert list(document.ocr_confidence) == [1]
    assert "The Customer shall pay each invoice" in squash(document.text)


@needs_tesseract
def test_a_pdf_with_text_on_every_page_runs_no_ocr():
    seen = []
    document = extract(text_pdf(TEXT_PAGE), "pdf", ocr=options(command="/nonexistent/tesseract", seen=seen))
    assert document.ocr_confidence == {} and seen == []
    assert "MASTER SERVICES AGREEMENT" in document.text


@needs_tesseract
@pytest.mark.parametrize(("image_format", "kind"), [("PNG", "png"), ("JPEG", "jpeg")])
def test_an_image_is_one_page_read_by_ocr(image_format, kind):
    data = image_bytes([page_image(SCANNED_PAGE)], image_format)
    assert detect_kind(data, f"scan.{kind}") == (kind, IMAGE_MIMES[kind])
    document = extract(data, kind, ocr=options())
    assert "The Customer shall pay each invoice within thirty days of receipt." in squash(document.text)
    assert [(page.number, page.start, page.end) for page in document.pages] == [(1, 0, len(document.text))]
    assert list(document.ocr_confidence) == [1] and document.mime_type == IMAGE_MIMES[kind]


@needs_tesseract
def test_a_multi_page_tiff_is_read_frame_by_frame():
    data = image_bytes([page_image(SCANNED_PAGE), page_image(SECOND_SCANNED_PAGE)], "TIFF")
    assert detect_kind(data, "fax.tif") == ("tiff", "image/tiff")
    seen = []
    document = extract(data, "tiff", ocr=options(seen=seen))
    assert len(document.pages) == 2 and sorted(document.ocr_confidence) == [1, 2]
    assert "Section 3. Term" in squash(document.text[document.pages[1].start :])
    assert "Section 3" not in document.text[: document.pages[0].end]
    assert seen == [(1, 0, 2), (2, 1, 2)]
    assert_pages_index_the_text(document)


@needs_tesseract
def test_a_blank_scan_has_no_extractable_text():
    blank = image_bytes([page_image([])], "PNG")
    with pytest.raises(NoExtractableText, match="OCR found no text"):
        extract(blank, "png", ocr=options())
    with pytest.raises(NoExtractableText, match="OCR found no text"):
        extract(scanned_pdf([[]]), "pdf", ocr=options())


def test_a_damaged_image_is_corrupt():
    truncated = image_bytes([page_image(SCANNED_PAGE)], "PNG")[:40]
    with pytest.raises(CorruptDocument):
        extract(truncated, "png", ocr=options())


def test_other_images_are_still_refused():
    with pytest.raises(UnsupportedMediaType, match="GIF image"):
        detect_kind(b"GIF89a" + bytes(64), "scan.gif")
    png = image_bytes([page_image(["x"], size=(40, 20))], "PNG")
    with pytest.raises(UnsupportedMediaType, match=r"ends in \.jpg but the file is a PNG image"):
        detect_kind(png, "scan.jpg")


# --- Tesseract missing, and the bounds ---------------------------------------------------------------


def test_a_missing_tesseract_is_ocr_unavailable():
    with pytest.raises(OCRUnavailable) as info:
        extract(scanned_pdf([SCANNED_PAGE]), "pdf", ocr=options(command="/nonexistent/bin/tesseract"))
    assert "'/nonexistent/bin/tesseract' was not found" in info.value.message
    assert "RAG_OCR_TESSERACT_CMD" in info.value.message
    with pytest.raises(OCRUnavailable):
        extract(image_bytes([page_image(SCANNED_PAGE)], "PNG"), "png", ocr=options(command="/nonexistent/t"))


def test_an_image_without_ocr_options_is_ocr_unavailable():
    with pytest.raises(OCRUnavailable):
        extract(image_bytes([page_image(SCANNED_PAGE)], "PNG"), "png")


def test_too_many_pages_are_refused_before_any_is_read():
    seen = []
    data = scanned_pdf([SCANNED_PAGE, SECOND_SCANNED_PAGE, SCANNED_PAGE])
    with pytest.raises(OCRLimitExceeded) as info:
        extract(data, "pdf", ocr=options(max_pages=2, seen=seen))
    assert info.value.details == {"pages": 3, "max_pages": 2} and "RAG_OCR_MAX_PAGES" in info.value.message
    tiff = image_bytes([page_image(SCANNED_PAGE)] * 3, "TIFF")
    with pytest.raises(OCRLimitExceeded):
        extract(tiff, "tiff", ocr=options(max_pages=2, seen=seen))
    assert seen == []


def test_a_page_over_the_pixel_bound_is_refused_before_any_is_read():
    seen = []
    # Letter at 100 dpi is 850 x 1100 = 935,000 pixels.
    with pytest.raises(OCRLimitExceeded) as info:
        extract(scanned_pdf([SCANNED_PAGE]), "pdf", ocr=options(max_pixels=900_000, seen=seen))
    assert info.value.details == {"page": 1, "pixels": 935_000, "max_pixels": 900_000}
    with pytest.raises(OCRLimitExceeded, match="RAG_OCR_MAX_PIXELS"):
        extract(
            image_bytes([page_image(SCANNED_PAGE)], "PNG"), "png", ocr=options(max_pixels=900_000, seen=seen)
        )
    assert seen == []


@needs_tesseract
def test_a_page_that_takes_too_long_is_stopped():
    with pytest.raises(OCRLimitExceeded) as info:
        extract(scanned_pdf([SCANNED_PAGE]), "pdf", ocr=options(timeout=0.001))
    assert info.value.details == {"page": 1, "timeout_seconds": 0.001}
    assert "RAG_OCR_PAGE_TIMEOUT" in info.value.message


def test_image_check_reads_headers_only():
    tiff = image_bytes([page_image(SCANNED_PAGE)] * 3, "TIFF")
    image_check(tiff, max_pages=3, max_pixels=1_000_000)
    with pytest.raises(OCRLimitExceeded):
        image_check(tiff, max_pages=2, max_pixels=1_000_000)
    with pytest.raises(OCRLimitExceeded):
        image_check(tiff, max_pages=3, max_pixels=900_000)
    image_check(b"\x89PNG\r\n\x1a\n damaged", max_pages=1, max_pixels=1)  # left for the job to report
