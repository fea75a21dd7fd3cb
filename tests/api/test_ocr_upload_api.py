"""Scans through the documents API: an image upload, its OCR confidence, and the upload bounds."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from rag.models import Document
from tests.api.conftest_docs import CASES, DOCUMENTS
from tests.scans import SCANNED_PAGE, SECOND_SCANNED_PAGE, image_bytes, needs_tesseract, page_image

pytestmark = pytest.mark.django_db


def _post(client, case, name: str, content: bytes):
    files = [SimpleUploadedFile(name, content)]
    return client.post(f"{CASES}/{case.pk}/documents", {"files": files}, format="multipart")


@needs_tesseract
def test_an_uploaded_png_is_read_and_reports_its_ocr_confidence(case, member_client, committed, settings):
    with committed():
        response = _post(member_client, case, "scan.png", image_bytes([page_image(SCANNED_PAGE)], "PNG"))
    assert response.status_code == 201, response.json()
    (uploaded,) = response.json()["documents"]
    assert uploaded["mime_type"] == "image/png"
    body = member_client.get(f"{DOCUMENTS}/{uploaded['id']}").json()
    assert body["status"] == "ready", body["error_message"]
    assert list(body["ocr_confidence"]) == ["1"] and 0 < body["ocr_confidence"]["1"] <= 100


def test_an_image_over_the_ocr_bounds_is_413_and_nothing_is_stored(case, member_client, settings):
    settings.RAG_OCR_MAX_PAGES = 1
    tiff = image_bytes([page_image(SCANNED_PAGE), page_image(SECOND_SCANNED_PAGE)], "TIFF")
    response = _post(member_client, case, "fax.tif", tiff)
    assert response.status_code == 413
    body = response.json()
    assert body["error_type"] == "OCRLimitExceeded" and "RAG_OCR_MAX_PAGES" in body["message"]
    assert body["details"]["files"][0]["details"] == {"pages": 2, "max_pages": 1}
    assert not Document.objects.filter(case=case).exists()


def test_another_tenants_scan_is_not_found(other_case, member_client, committed, settings):
    from rag.ingest import service

    settings.RAG_OCR_TESSERACT_CMD = "/nonexistent/tesseract"  # fails fast; only the lookup matters
    with committed():
        theirs = service.document_upload(
            tenant=other_case.tenant,
            case=other_case,
            filename="scan.png",
            content=image_bytes([page_image(SCANNED_PAGE)], "PNG"),
        ).document
    assert member_client.get(f"{DOCUMENTS}/{theirs.pk}").status_code == 404
