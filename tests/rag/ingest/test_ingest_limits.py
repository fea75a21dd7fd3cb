"""No upload can hold a worker or the web for long (#33): the text one document yields is capped
across its pages and reading stops at the cap (the 11 KB PDF that extracts to 80 MB), its pages and
passages too; an e-mail's MIME structure is bounded by a cheap scan before anything parses it, in
the upload request (422, nothing stored) and in the worker (the document fails, nothing split off).
Real extraction, PostgreSQL and embeddings; ingestion runs eagerly."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from rag.ingest import service
from rag.ingest.chunking import chunk_text
from rag.ingest.extract import TextLimits, extract
from rag.ingest.extract.email import parse
from rag.ingest.extract.email_scan import mime_check
from rag.models import Chunk, Document
from ragsite.exceptions import DocumentTooComplex, DocumentTooLarge, EmailTooComplex
from tenants.models import Role
from tests.rag.ingest.bombs import empty_parts_email, nested_email, pdf_bomb
from tests.rag.ingest.email_messages import attach, eml, message

pytestmark = pytest.mark.django_db

UNCAPPED_CONTENT = 0  # TextLimits(max_content_bytes=0): only the characters cap applies

# --- Extraction ------------------------------------------------------------------------------------


def test_the_pdf_bomb_is_refused_in_seconds_before_any_text_is_read():
    bomb = pdf_bomb()  # 40 pages drawing one 2 MB stream: ~71 million characters
    assert len(bomb) < 15_000
    started = time.monotonic()
    with pytest.raises(DocumentTooLarge) as info:
        extract(bomb, "pdf")
    assert time.monotonic() - started < 5
    assert "RAG_MAX_PDF_CONTENT_MB" in info.value.message
    assert info.value.details["pages"] < 40  # stopped at the first page over the limit


def test_the_characters_cap_counts_every_page_together_and_stops_at_the_page_that_passes_it():
    # Each page yields ~177,000 characters, under the cap on its own; three pages pass it.
    bomb = pdf_bomb(pages=20, stream_bytes=200_000)
    limits = TextLimits(max_chars=400_000, max_content_bytes=UNCAPPED_CONTENT)
    with pytest.raises(DocumentTooLarge) as info:
        extract(bomb, "pdf", limits=limits)
    assert info.value.details == {"max_chars": 400_000, "pages_read": 3}
    assert "RAG_MAX_DOCUMENT_CHARS" in info.value.message
    assert len(extract(bomb, "pdf", limits=TextLimits(max_chars=0, max_content_bytes=0)).text) > 3_000_000


def test_reading_stops_inside_the_page_that_passes_the_cap():
    page = pdf_bomb(pages=1, stream_bytes=2_000_000)  # one page of ~1.8 million characters
    started = time.monotonic()
    whole = extract(page, "pdf", limits=TextLimits(max_chars=0, max_content_bytes=0))
    reading_all = time.monotonic() - started
    started = time.monotonic()
    with pytest.raises(DocumentTooLarge) as info:
        extract(page, "pdf", limits=TextLimits(max_chars=10_000, max_content_bytes=0))
    assert info.value.details["pages_read"] == 1
    assert len(whole.text) > 1_000_000 and time.monotonic() - started < reading_all / 2


def test_text_and_pages_of_other_kinds_are_capped_too():
    with pytest.raises(DocumentTooLarge, match="more than 1,000 characters"):
        extract(b"A clause of the agreement. " * 100, "txt", limits=TextLimits(max_chars=1_000))
    with pytest.raises(DocumentTooComplex) as info:
        extract(pdf_bomb(pages=4, stream_bytes=1_000), "pdf", limits=TextLimits(max_pages=3))
    assert info.value.details == {"pages": 4, "max_pages": 3}
    assert "RAG_MAX_DOCUMENT_PAGES" in info.value.message


def test_an_uploaded_pdf_bomb_fails_fast_with_nothing_indexed(case, upload):
    started = time.monotonic()
    document = upload(case, "bomb.pdf", content=pdf_bomb()).document
    document.refresh_from_db()
    assert time.monotonic() - started < 15
    assert (document.status, document.error_type, document.chunk_count) == ("failed", "DocumentTooLarge", 0)
    assert "RAG_MAX_PDF_CONTENT_MB" in document.error_message
    assert not Chunk.objects.filter(document=document).exists() and document.text == ""


def test_the_document_characters_setting_fails_a_document_over_it(case, upload, settings):
    settings.RAG_MAX_DOCUMENT_CHARS, settings.RAG_MAX_PDF_CONTENT_MB = 500_000, 1_000
    document = upload(case, "long.pdf", content=pdf_bomb(pages=40, stream_bytes=200_000)).document
    document.refresh_from_db()
    assert (document.status, document.error_type, document.chunk_count) == ("failed", "DocumentTooLarge", 0)
    assert "more than 500,000 characters of text within its first 3 pages" in document.error_message


# --- Chunking --------------------------------------------------------------------------------------


def test_chunking_stops_at_max_chunks_with_the_same_first_passages():
    text = "\n\n".join(
        f"Clause {n}. The Supplier shall deliver lot {n} on time and in full." for n in range(200)
    )
    every = chunk_text(text, size=200, overlap=20)
    first = chunk_text(text, size=200, overlap=20, max_chunks=5)
    assert len(every) > 20 and first == every[:5]


def test_a_document_making_too_many_passages_fails_before_embedding(case, upload, settings, embedded_texts):
    settings.RAG_MAX_PASSAGES_PER_DOCUMENT = 5
    text = "\n\n".join(
        f"Clause {n}. " + "The Buyer shall pay each invoice within thirty days. " * 12 for n in range(40)
    )
    document = upload(case, "long.txt", content=text.encode()).document
    document.refresh_from_db()
    assert (document.status, document.error_type) == ("failed", "DocumentTooLarge")
    assert (
        "more than 5 passages" in document.error_message
        and "RAG_MAX_PASSAGES_PER_DOCUMENT" in document.error_message
    )
    assert embedded_texts == [] and not Chunk.objects.filter(document=document).exists()


# --- E-mails ----------------------------------------------------------------------------------------


def _email_with_attachments() -> bytes:
    msg = message()
    attach(msg, "notes.txt", b"Call Bob about the indemnity cap.", "text/plain")
    attach(msg, "terms.txt", b"Closing in June, five million.", "text/plain")
    return eml(msg)


def test_the_scan_counts_parts_and_nesting_of_an_ordinary_email():
    data = _email_with_attachments()  # body, two attachments
    mime_check(data, max_parts=3, max_nesting=1)
    with pytest.raises(EmailTooComplex) as info:
        mime_check(data, max_parts=2, max_nesting=1)
    assert info.value.details == {"parts": 3, "max_parts": 2}
    with pytest.raises(EmailTooComplex) as info:
        mime_check(data, max_parts=3, max_nesting=0)
    assert info.value.details == {"nesting": 1, "max_nesting": 0}


def test_hostile_emails_are_refused_by_the_scan_without_parsing(settings):
    started = time.monotonic()
    with pytest.raises(EmailTooComplex) as deep:
        parse(nested_email())  # the standard library alone: RecursionError
    with pytest.raises(EmailTooComplex) as wide:
        parse(empty_parts_email())  # the standard library alone: over a minute per parse
    assert time.monotonic() - started < 2
    assert deep.value.details == {"nesting": 21, "max_nesting": settings.RAG_EMAIL_MAX_NESTING}
    assert wide.value.details == {"parts": 1_001, "max_parts": settings.RAG_EMAIL_MAX_PARTS}
    assert "RAG_EMAIL_MAX_NESTING" in deep.value.message and "RAG_EMAIL_MAX_PARTS" in wide.value.message


@pytest.mark.parametrize(("name", "make"), [("nested", nested_email), ("empty parts", empty_parts_email)])
def test_uploading_a_hostile_email_is_a_422_quickly_with_nothing_stored(case, make_key_client, name, make):
    client = make_key_client(case.tenant, Role.MEMBER)
    content = make()
    started = time.monotonic()
    response = client.post(
        f"/api/v1/rag/cases/{case.pk}/documents",
        {"files": [SimpleUploadedFile("mail.eml", content)]},
        format="multipart",
    )
    assert time.monotonic() - started < 5, name
    assert response.status_code == 422, response.json()
    body = response.json()
    assert body["error_type"] == "EmailTooComplex"
    assert body["details"]["files"][0]["error_type"] == "EmailTooComplex"
    assert not Document.objects.filter(tenant=case.tenant).exists()


def test_an_email_over_the_limits_in_the_worker_fails_with_nothing_split_off(case, settings):
    stored = service.document_upload(
        tenant=case.tenant, case=case, filename="mail.eml", content=_email_with_attachments(), enqueue=False
    ).document
    settings.RAG_EMAIL_MAX_PARTS = 2  # lowered after it was stored: the worker checks again
    email = service.document_ingest(tenant=case.tenant, document_id=stored.pk)
    assert (email.status, email.error_type, email.chunk_count) == ("failed", "EmailTooComplex", 0)
    assert list(Document.objects.filter(tenant=case.tenant)) == [email]
    settings.RAG_EMAIL_MAX_PARTS = 3
    email = service.document_ingest(tenant=case.tenant, document_id=stored.pk)
    assert email.status == "ready" and Document.objects.filter(parent=email).count() == 2
