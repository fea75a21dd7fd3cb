"""OCR in /api/v1/health: ready with Tesseract and its language data, degraded without."""

from __future__ import annotations

import pytest

from tests.scans import needs_tesseract

pytestmark = pytest.mark.django_db


@needs_tesseract
def test_health_reports_tesseract_ready(api_client):
    body = api_client.get("/api/v1/health").json()
    expected = {"engine": "tesseract", "command": "tesseract", "languages": "eng", "status": "ready"}
    assert body["ocr"] == expected


def test_a_missing_tesseract_degrades_health(api_client, settings):
    settings.RAG_OCR_TESSERACT_CMD = "/nonexistent/tesseract"
    body = api_client.get("/api/v1/health").json()
    assert body["ocr"]["status"] == "unavailable" and "was not found" in body["ocr"]["detail"]
    assert body["status"] == "degraded"


@needs_tesseract
def test_missing_language_data_degrades_health(api_client, settings):
    settings.RAG_OCR_LANGUAGES = "eng+zzz"
    body = api_client.get("/api/v1/health").json()
    assert body["ocr"]["status"] == "unavailable" and "no language data for zzz" in body["ocr"]["detail"]
