"""Scans through the ingestion job: real Tesseract, real embeddings, real pgvector."""

from __future__ import annotations

import pytest

from rag import selectors
from rag.ingest import service
from rag.models import Chunk, Document, DocumentStatus
from ragsite import exceptions as errors
from tests.scans import (
    SCANNED_PAGE,
    SECOND_SCANNED_PAGE,
    image_bytes,
    mixed_pdf,
    needs_tesseract,
    page_image,
    scanned_pdf,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _small_scans(settings):
    settings.RAG_OCR_DPI = 100  # the test scans are made at 100 dpi: keep OCR quick


@pytest.fixture
def stages(monkeypatch):
    """Every (progress, stage) the job writes on the document, in order (the real writes happen)."""
    seen: list[tuple[int, str]] = []
    real = service._set_progress

    def recording(document, *, progress, stage, status=None):
        seen.append((progress, stage))
        real(document, progress=progress, stage=stage, status=status)

    monkeypatch.setattr(service, "_set_progress", recording)
    return seen


def _ingested(case, upload, name: str, content: bytes) -> Document:
    result = upload(case, name, content=content, filename=name)
    return selectors.document_get(tenant=case.tenant, document_id=result.document.pk)


def _assert_exact_offsets(document: Document) -> None:
    chunks = list(selectors.chunk_list(tenant=document.tenant, document_id=document.pk))
    assert chunks and document.chunk_count == len(chunks)
    for chunk in chunks:
        assert document.text[chunk.char_start : chunk.char_end] == chunk.text
        assert 1 <= chunk.page_start <= chunk.page_end <= document.page_count


@needs_tesseract
def test_a_scanned_pdf_is_read_with_progress_and_confidence(case, upload, stages):
    document = _ingested(case, upload, "scan.pdf", scanned_pdf([SCANNED_PAGE, SECOND_SCANNED_PAGE]))
    assert document.status == DocumentStatus.READY, document.error_message
    assert (document.page_count, len(document.page_starts)) == (2, 2)
    assert sorted(document.ocr_confidence) == ["1", "2"]
    assert all(50 <= value <= 100 for value in document.ocr_confidence.values())
    assert "within thirty days of receipt." in " ".join(document.text.split())
    assert [stage for _, stage in stages if stage.startswith("OCR")] == ["OCR page 1/2", "OCR page 2/2"]
    ocr_progress = [progress for progress, stage in stages if stage.startswith("OCR")]
    assert ocr_progress == sorted(ocr_progress) and all(1 <= p < 10 for p in ocr_progress)
    _assert_exact_offsets(document)


@needs_tesseract
def test_a_mixed_pdf_reads_only_its_scanned_page_and_keeps_offsets_exact(case, upload, stages):
    document = _ingested(case, upload, "mixed.pdf", mixed_pdf())
    assert document.status == DocumentStatus.READY, document.error_message
    assert list(document.ocr_confidence) == ["2"]
    assert [stage for _, stage in stages if stage.startswith("OCR")] == ["OCR page 2 (1/1)"]
    page_two = document.text[document.page_starts[1] :]
    assert "The Customer shall pay each invoice" in " ".join(page_two.split())
    assert "MASTER SERVICES AGREEMENT" in document.text[: document.page_starts[1]]
    _assert_exact_offsets(document)
    chunks = selectors.chunk_list(tenant=case.tenant, document_id=document.pk)
    assert max(chunk.page_end for chunk in chunks) == 2  # the scanned page's text is in a passage


@needs_tesseract
@pytest.mark.parametrize(("name", "image_format", "mime"), [("scan.png", "PNG", "image/png")])
def test_an_image_upload_is_ingested(case, upload, name, image_format, mime):
    document = _ingested(case, upload, name, image_bytes([page_image(SCANNED_PAGE)], image_format))
    assert document.status == DocumentStatus.READY, document.error_message
    assert document.mime_type == mime and document.file.name.endswith(".png")
    assert list(document.ocr_confidence) == ["1"] and document.page_count == 1
    _assert_exact_offsets(document)


def test_a_missing_tesseract_fails_the_document_clearly(case, upload, settings):
    settings.RAG_OCR_TESSERACT_CMD = "/nonexistent/bin/tesseract"
    ready = _ingested(case, upload, "note.txt", b"Clause 1. The notice period is thirty days.")
    document = _ingested(case, upload, "scan.pdf", scanned_pdf([SCANNED_PAGE]))
    assert document.status == DocumentStatus.FAILED
    assert document.error_type == "OCRUnavailable"
    assert "'/nonexistent/bin/tesseract' was not found" in document.error_message
    assert not Chunk.objects.filter(document=document).exists()
    assert Document.objects.get(pk=ready.pk).status == DocumentStatus.READY


def test_a_scan_over_the_page_bound_fails_in_the_job(case, upload, settings):
    settings.RAG_OCR_MAX_PAGES = 1
    document = _ingested(case, upload, "scan.pdf", scanned_pdf([SCANNED_PAGE, SECOND_SCANNED_PAGE]))
    assert (document.status, document.error_type) == (DocumentStatus.FAILED, "OCRLimitExceeded")
    assert "2 pages to read by OCR; at most 1" in document.error_message


def test_an_image_over_the_bounds_is_refused_at_upload(case, upload, settings):
    settings.RAG_OCR_MAX_PAGES = 1
    tiff = image_bytes([page_image(SCANNED_PAGE), page_image(SECOND_SCANNED_PAGE)], "TIFF")
    with pytest.raises(errors.OCRLimitExceeded) as refused:
        upload(case, "fax.tiff", content=tiff, filename="fax.tiff")
    assert refused.value.status_code == 413
    settings.RAG_OCR_MAX_PAGES, settings.RAG_OCR_MAX_PIXELS = 10, 900_000  # a page is 935,000 pixels
    with pytest.raises(errors.OCRLimitExceeded, match="RAG_OCR_MAX_PIXELS"):
        upload(case, "fax.tiff", content=tiff, filename="fax.tiff")
    assert not Document.objects.filter(case=case).exists()
