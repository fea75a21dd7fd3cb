"""Ingestion end to end through the service: real extraction, real embeddings, real pgvector."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.files.storage import default_storage

from rag import selectors
from rag.ingest import embedding, service
from rag.models import Chunk, Document, DocumentStatus, TitleSource
from rag.retrieval import routing
from ragsite import exceptions as errors
from tests.rag.conftest import fixture_bytes
from tests.scans import BLANK_SCAN_ERROR

pytestmark = pytest.mark.django_db


def _assert_exact_offsets(document: Document) -> None:
    chunks = list(selectors.chunk_list(tenant=document.tenant, document_id=document.pk))
    assert chunks, "no chunks were written"
    assert document.chunk_count == len(chunks)
    for chunk in chunks:
        assert document.text[chunk.char_start : chunk.char_end] == chunk.text
        assert 1 <= chunk.page_start <= chunk.page_end <= document.page_count


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("contract.txt", "text/plain"),
        ("contract.pdf", "application/pdf"),
        ("contract.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ],
)
def test_each_format_ends_ready_with_exact_offsets(case, upload, name, mime):
    result = upload(case, name)
    assert result.duplicate is False
    document = selectors.document_get(tenant=case.tenant, document_id=result.document.pk)
    assert document.status == DocumentStatus.READY, document.error_message
    assert document.mime_type == mime
    assert (document.progress, document.stage) == (100, "")
    assert document.embedding_model == service.index_id()
    _assert_exact_offsets(document)


def test_txt_text_is_the_file_text(case, upload):
    document = selectors.document_get(
        tenant=case.tenant, document_id=upload(case, "contract.txt").document.pk
    )
    assert document.text == fixture_bytes("contract.txt").decode("utf-8")


def test_pdf_chunks_know_their_pages(case, upload):
    document = selectors.document_get(
        tenant=case.tenant, document_id=upload(case, "contract.pdf").document.pk
    )
    assert document.page_count == 3
    pages = {
        (c.page_start, c.page_end) for c in selectors.chunk_list(tenant=case.tenant, document_id=document.pk)
    }
    assert max(end for _, end in pages) == 3
    assert min(start for start, _ in pages) == 1


def test_chunks_carry_normalized_vectors_fulltext_and_filters(case, upload):
    document = upload(case, "contract.txt", doc_type="contract", jurisdiction="Delaware").document
    chunk = Chunk.objects.for_tenant(case.tenant).filter(document=document).first()
    vector = np.asarray(chunk.embedding)
    assert vector.shape == (384,)
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-3)
    assert (chunk.doc_type, chunk.jurisdiction, chunk.case_id) == ("contract", "Delaware", case.pk)
    word = next(w for w in chunk.text.split() if w.isalpha() and len(w) > 6)
    assert Chunk.objects.filter(pk=chunk.pk, search_vector=word).exists()


def test_same_bytes_in_the_same_case_are_not_ingested_twice(case, upload, embedded_texts):
    first = upload(case, "contract.txt").document
    embedded = len(embedded_texts)
    second = upload(case, "contract.txt", filename="renamed copy.txt")
    assert second.duplicate is True and second.document.pk == first.pk
    assert Document.objects.for_tenant(case.tenant).count() == 1
    assert len(embedded_texts) == embedded


def test_same_bytes_in_another_case_reuse_embeddings(case, upload, embedded_texts, tenant):
    from rag import services as rag_services

    upload(case, "contract.txt")
    embedded = len(embedded_texts)
    other = rag_services.case_create(tenant=tenant, name="Second matter")
    document = upload(other, "contract.txt").document
    assert document.pk and Document.objects.for_tenant(tenant).count() == 2
    assert len(embedded_texts) == embedded, "already-embedded passages were embedded again"
    _assert_exact_offsets(selectors.document_get(tenant=tenant, document_id=document.pk))


def test_embeddings_are_not_reused_across_tenants(case, other_case, upload, embedded_texts):
    upload(case, "contract.txt")
    embedded = len(embedded_texts)
    upload(other_case, "contract.txt")
    assert len(embedded_texts) == 2 * embedded


def test_reindex_replaces_chunks_without_embedding_again(case, upload, embedded_texts, committed):
    document = upload(case, "contract.pdf").document
    before = list(Chunk.objects.filter(document=document).values_list("pk", "text"))
    embedded = len(embedded_texts)
    version = selectors.index_version_get(tenant=case.tenant)
    with committed():
        service.document_reindex(tenant=case.tenant, document_id=document.pk)
    after = list(Chunk.objects.filter(document=document).values_list("pk", "text"))
    assert [t for _, t in after] == [t for _, t in before]
    assert {p for p, _ in after}.isdisjoint({p for p, _ in before})  # rewritten, not left over
    assert len(embedded_texts) == embedded
    assert selectors.index_version_get(tenant=case.tenant) == version + 1


def test_model_change_marks_documents_stale_and_reindexing_reembeds(
    case, upload, settings, embedded_texts, committed
):
    document = upload(case, "contract.txt").document
    embedded = len(embedded_texts)
    # The same weights under another name: a different embedding space as far as the index knows.
    settings.EMBEDDING_MODEL = str(embedding.resolve_model_path("all-MiniLM-L6-v2"))
    stale = selectors.document_list_stale(tenant=case.tenant, embedding_model=embedding.model_id())
    assert list(stale) == [document]
    with committed():
        assert service.tenant_reindex(tenant=case.tenant, stale_only=True) == 1
    assert len(embedded_texts) == 2 * embedded
    models = set(Chunk.objects.filter(document=document).values_list("embedding_model", flat=True))
    assert models == {settings.EMBEDDING_MODEL}


def test_delete_removes_chunks_and_file(case, upload, committed):
    document = upload(case, "contract.txt").document
    stored = Document.objects.get(pk=document.pk).file.name
    assert default_storage.exists(stored)
    version = selectors.index_version_get(tenant=case.tenant)
    with committed():
        service.document_delete(tenant=case.tenant, document_id=document.pk)
    assert not Chunk.objects.filter(document_id=document.pk).exists()
    assert not default_storage.exists(stored)
    assert selectors.index_version_get(tenant=case.tenant) == version + 1


def test_another_tenants_document_is_not_found(case, other_case, upload):
    document = upload(case, "contract.txt").document
    for call in (
        lambda: selectors.document_get(tenant=other_case.tenant, document_id=document.pk),
        lambda: service.document_reindex(tenant=other_case.tenant, document_id=document.pk),
        lambda: service.document_delete(tenant=other_case.tenant, document_id=document.pk),
    ):
        with pytest.raises(errors.NotFound):
            call()
    assert list(selectors.chunk_list(tenant=other_case.tenant, document_id=document.pk)) == []
    assert Document.objects.filter(pk=document.pk, status=DocumentStatus.READY).exists()


def test_upload_into_another_tenants_case_is_refused(case, other_case, upload):
    with pytest.raises(errors.InvalidInput):
        service.document_upload(tenant=case.tenant, case=other_case, filename="a.txt", content=b"Some text.")


# --- Bad input: a clear error, nothing half-written, every other document intact ---------------


@pytest.fixture
def ready_document(case, upload):
    document = upload(case, "contract.txt").document
    return document, Chunk.objects.filter(document=document).count()


def _intact(case, ready_document) -> None:
    document, chunk_count = ready_document
    assert Chunk.objects.filter(document=document).count() == chunk_count
    assert Document.objects.get(pk=document.pk).status == DocumentStatus.READY


@pytest.mark.parametrize(
    ("content", "filename", "error"),
    [
        (b"", "empty.txt", errors.EmptyFile),
        (b"GIF89a" + bytes(64), "image.gif", errors.UnsupportedMediaType),
        (fixture_bytes("contract.pdf"), "contract.docx", errors.UnsupportedMediaType),
        (fixture_bytes("binary.txt"), "binary.txt", errors.UnsupportedMediaType),
        (fixture_bytes("not_docx.zip"), "archive.docx", errors.UnsupportedMediaType),
    ],
)
def test_refused_at_upload(case, upload, ready_document, content, filename, error):
    with pytest.raises(error) as refused:
        upload(case, filename, content=content, filename=filename)
    assert refused.value.message
    assert Document.objects.filter(tenant=case.tenant).count() == 1
    _intact(case, ready_document)


def test_over_the_size_limit_is_413(case, upload, ready_document, settings):
    settings.RAG_MAX_UPLOAD_MB = 1
    with pytest.raises(errors.PayloadTooLarge) as refused:
        upload(case, "big.txt", content=b"word " * 300_000, filename="big.txt")
    assert refused.value.status_code == 413 and "1 MB" in refused.value.message
    _intact(case, ready_document)


@pytest.mark.parametrize(
    ("name", "error_type"),
    [
        ("corrupt.pdf", "CorruptDocument"),
        ("encrypted.pdf", "EncryptedDocument"),
        ("scanned.pdf", BLANK_SCAN_ERROR),
    ],
)
def test_unreadable_documents_fail_cleanly(case, upload, ready_document, name, error_type):
    version = selectors.index_version_get(tenant=case.tenant)
    try:
        result = upload(case, name)
    except errors.ApplicationError as refused:  # refusing at upload is as good as failing the job
        assert refused.error_type == error_type
    else:
        document = Document.objects.get(pk=result.document.pk)
        assert document.status == DocumentStatus.FAILED
        assert document.error_type == error_type and document.error_message
        assert not Chunk.objects.filter(document=document).exists()
    assert selectors.index_version_get(tenant=case.tenant) == version
    _intact(case, ready_document)


def test_zip_bomb_docx_is_refused(case, upload, ready_document, zip_bomb_docx):
    try:
        result = upload(case, "bomb.docx", content=zip_bomb_docx, filename="bomb.docx")
    except errors.ApplicationError as refused:
        assert refused.error_type in {"DocumentTooComplex", "UnsupportedMediaType"}
    else:
        document = Document.objects.get(pk=result.document.pk)
        assert (document.status, document.error_type) == (DocumentStatus.FAILED, "DocumentTooComplex")
    _intact(case, ready_document)


@pytest.mark.parametrize("name", ["nul_bytes.txt", "latin1.txt", "utf16.txt", "encrypted_empty_password.pdf"])
def test_awkward_but_readable_files_are_ingested(case, upload, name):
    document = Document.objects.get(pk=upload(case, name).document.pk)
    assert document.status == DocumentStatus.READY, document.error_message
    assert "\x00" not in document.text
    _assert_exact_offsets(document)


def _unreadable(*_args, **_options):
    raise errors.CorruptDocument()


def test_uploading_a_failed_document_again_retries_it(case, upload, monkeypatch):
    with monkeypatch.context() as patch:  # the first attempt fails as if the file could not be read
        patch.setattr(service, "extract", _unreadable)
        failed = upload(case, "contract.txt").document
    assert Document.objects.get(pk=failed.pk).status == DocumentStatus.FAILED
    retried = upload(case, "contract.txt")
    assert retried.duplicate is False and retried.document.pk == failed.pk
    assert Document.objects.get(pk=failed.pk).status == DocumentStatus.READY


# --- titles ---------------------------------------------------------------------------------------

SPONSORSHIP = (
    b'SPONSORSHIP AGREEMENT\n\nThis agreement ("Agreement") is entered into as of the 23rd day of September '
    b'1998 ("Effective Date"), by and between Excite, Inc., a Delaware corporation ("Excite"), and Vitamin '
    b'Shoppe Industries Inc., a New York corporation ("Sponsor").\n\n1. Term. This Agreement ends on 31 '
    b"December 1999 unless renewed in writing.\n"
)
SPONSORSHIP_TITLE = "Sponsorship Agreement — Excite / Vitamin Shoppe Industries"


def _routed_titles(case, query: str) -> list[str]:
    version = selectors.index_version_get(tenant=case.tenant)
    return [d.title for d in routing.route(tenant=case.tenant, query=query, index_version=version).documents]


def test_without_a_title_the_heading_and_parties_title_the_document(case, upload):
    uploaded = upload(case, "contract.txt", content=SPONSORSHIP, filename="scan_0042.txt").document
    assert (uploaded.title, uploaded.title_source) == ("scan_0042", TitleSource.FILE_NAME)  # until read
    document = Document.objects.get(pk=uploaded.pk)
    assert document.status == DocumentStatus.READY
    assert (document.title, document.title_source) == (SPONSORSHIP_TITLE, TitleSource.TEXT)
    assert _routed_titles(case, "In the Vitamin Shoppe sponsorship, when does the term end?") == [
        SPONSORSHIP_TITLE
    ]


def test_a_title_the_user_gave_is_kept_through_reindexing(case, upload, committed):
    document = upload(case, "contract.txt", content=SPONSORSHIP, title="Excite deal (signed)").document
    with committed():
        service.document_reindex(tenant=case.tenant, document_id=document.pk)
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY
    assert (document.title, document.title_source) == ("Excite deal (signed)", TitleSource.USER)


def test_text_without_a_heading_keeps_the_file_name_title(case, upload):
    content = b"Minutes of the partners' meeting of 3 May. Present: all partners. Nothing was decided."
    document = Document.objects.get(
        pk=upload(case, "contract.txt", content=content, filename="minutes.txt").document.pk
    )
    assert (document.title, document.title_source) == ("minutes", TitleSource.FILE_NAME)


def test_reindexing_an_older_document_retitles_it_once_its_text_is_read(case, upload, committed, monkeypatch):
    document = upload(case, "contract.txt", content=SPONSORSHIP, filename="scan_0042.txt").document
    # As ingested before titles were derived: the file name's title, its passages searchable.
    Document.objects.filter(pk=document.pk).update(title="scan_0042", title_source=TitleSource.FILE_NAME)
    version = selectors.index_version_get(tenant=case.tenant)
    while_embedding = []
    real_embed = service._embed_with_reuse

    def watched_embed(document, *args):
        title = Document.objects.values_list("title", flat=True).get(pk=document.pk)
        while_embedding.append((title, selectors.index_version_get(tenant=case.tenant)))
        return real_embed(document, *args)

    monkeypatch.setattr(service, "_embed_with_reuse", watched_embed)
    with committed():
        service.document_reindex(tenant=case.tenant, document_id=document.pk)
    # The list shows the new title while passages are embedded, and no cached answer cites the old one.
    assert while_embedding == [(SPONSORSHIP_TITLE, version + 1)]
    assert Document.objects.get(pk=document.pk).title == SPONSORSHIP_TITLE
