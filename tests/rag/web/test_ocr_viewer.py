"""The document viewer marks the pages read by OCR, and warns about the low-confidence ones."""

from __future__ import annotations

import re

import pytest

from rag.models import DocumentStatus
from tests.scans import SCANNED_PAGE, mixed_pdf, needs_tesseract

pytestmark = [pytest.mark.django_db, needs_tesseract]


@pytest.fixture
def mixed_document(case, upload, settings):
    settings.RAG_OCR_DPI = 100
    document = upload(case, "mixed.pdf", content=mixed_pdf(), filename="mixed.pdf").document
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY, document.error_message
    return document


def test_a_low_confidence_page_gets_a_note_to_check_the_original(mixed_document, member_browser, settings):
    settings.RAG_OCR_LOW_CONFIDENCE = 101  # every OCR page counts as low
    html = member_browser.get(f"/documents/{mixed_document.pk}/").content.decode()
    confidence = round(mixed_document.ocr_confidence["2"])
    note = f"Page 2 was read by OCR (confidence {confidence} %) — check the original."
    assert note in html
    assert f'<a href="#page-2">{note}</a>' in html
    assert "<dd>2 (1 read by OCR)</dd>" in html
    # The note is on page 2 only: page 1 has a text layer.
    page_one = html.split('id="page-1"', 1)[1].split('id="page-2"', 1)[0]
    assert "read by OCR" not in page_one
    page_two = html.split('id="page-2"', 1)[1]
    assert re.search(r'class="ocr-read low">· read by OCR, confidence \d+ % — check the original', page_two)


def test_a_confident_page_is_only_labelled(mixed_document, member_browser, settings):
    settings.RAG_OCR_LOW_CONFIDENCE = 0
    html = member_browser.get(f"/documents/{mixed_document.pk}/").content.decode()
    assert "check the original" not in html and "Pages read by OCR with low confidence" not in html
    assert re.search(r'class="ocr-read">· read by OCR, confidence \d+ %</span>', html)
    assert "The Customer shall pay" in html or SCANNED_PAGE[2] in " ".join(html.split())


def test_another_firms_scan_is_not_found(other_case, upload, member_browser, settings):
    settings.RAG_OCR_DPI = 100
    theirs = upload(other_case, "mixed.pdf", content=mixed_pdf(), filename="mixed.pdf").document
    response = member_browser.get(f"/documents/{theirs.pk}/")
    assert response.status_code == 404 and b"read by OCR" not in response.content
