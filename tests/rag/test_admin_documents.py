"""Django admin: documents and chunks are inspectable, documents reindexable; a document keeps its
tenant and case, and is never created here (uploads go through the ingestion service)."""

from __future__ import annotations

import json

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from rag import selectors
from rag.ingest import service
from rag.models import Chunk, Document, DocumentStatus, TitleSource

pytestmark = pytest.mark.django_db


@pytest.fixture
def document(case, upload):
    document = upload(case, "contract.txt", title="Supply <contract>").document
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY and document.chunk_count > 0
    return document


def test_documents_are_listed_filtered_and_searched(admin_client, document, other_tenant):
    url = reverse("admin:rag_document_changelist")
    page = admin_client.get(url)
    assert list(page.context["cl"].result_list) == [document]
    assert "Supply &lt;contract&gt;" in page.content.decode()
    assert list(admin_client.get(url, {"q": "supply"}).context["cl"].result_list) == [document]
    assert list(admin_client.get(url, {"tenant__id__exact": other_tenant.pk}).context["cl"].result_list) == []


def test_a_document_page_shows_its_metadata_not_its_text(admin_client, document):
    response = admin_client.get(reverse("admin:rag_document_change", args=[document.pk]))
    assert response.status_code == 200
    form = response.context["adminform"].form
    assert "text" not in form.fields
    assert {"tenant", "case", "sha256", "status"}.isdisjoint(form.fields)  # shown read-only
    assert document.sha256 in response.content.decode()


def test_documents_cannot_be_added_in_the_admin(admin_client, document):
    assert admin_client.get(reverse("admin:rag_document_add")).status_code == 403
    assert (
        reverse("admin:rag_document_add")
        not in admin_client.get(reverse("admin:rag_document_changelist")).content.decode()
    )


def test_a_sensitivity_change_reaches_the_chunks(admin_client, document, other_tenant, other_case):
    url = reverse("admin:rag_document_change", args=[document.pk])
    data = {
        "title": document.title,
        "original_filename": document.original_filename,
        "source_type": document.source_type,
        "doc_type": document.doc_type,
        "jurisdiction": "",
        "document_date": "",
        "sensitivity": "confidential",
        "metadata": "{}",
        # Ignored: read-only on an existing document.
        "tenant": other_tenant.pk,
        "case": other_case.pk,
    }
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    document.refresh_from_db()
    assert (document.sensitivity, document.tenant_id, document.case_id) == (
        "confidential",
        document.case.tenant_id,
        document.case.pk,
    )
    assert document.tenant_id != other_tenant.pk
    assert set(Chunk.objects.filter(document=document).values_list("sensitivity", flat=True)) == {
        "confidential"
    }


def test_the_reindex_action_queues_and_reingests(admin_client, document, committed):
    indexed_at = document.indexed_at
    with committed():
        response = admin_client.post(
            reverse("admin:rag_document_changelist"),
            {"action": "reindex", "_selected_action": [document.pk]},
            follow=True,
        )
    assert "Queued 1 document(s) for reindexing." in response.content.decode()
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY and document.indexed_at > indexed_at


def test_chunks_are_listed_and_read_only(admin_client, document):
    chunk = Chunk.objects.filter(document=document).first()
    listed = admin_client.get(
        reverse("admin:rag_chunk_changelist"), {"tenant__id__exact": document.tenant_id}
    )
    assert chunk in listed.context["cl"].result_list
    page = admin_client.get(reverse("admin:rag_chunk_change", args=[chunk.pk]))
    assert page.status_code == 200 and "embedding" not in page.context["adminform"].form.fields
    assert (
        admin_client.post(reverse("admin:rag_chunk_change", args=[chunk.pk]), {"text": "x"}).status_code
        == 403
    )
    assert admin_client.get(reverse("admin:rag_chunk_add")).status_code == 403
    chunk.refresh_from_db()
    assert chunk.text != "x"


def test_deleting_a_document_bumps_the_index_version_and_deletes_its_file(admin_client, document, committed):
    name, version = document.file.name, selectors.index_version_get(tenant=document.tenant)
    assert default_storage.exists(name)
    with committed():
        response = admin_client.post(
            reverse("admin:rag_document_delete", args=[document.pk]), {"post": "yes"}
        )
    assert response.status_code == 302
    assert not Document.objects.filter(pk=document.pk).exists()
    assert selectors.index_version_get(tenant=document.tenant) > version
    assert not default_storage.exists(name)


def test_the_bulk_delete_of_documents_goes_through_the_service(
    admin_client, document, case, upload, committed
):
    second = upload(case, "contract.pdf").document
    names = [document.file.name, second.file.name]
    version = selectors.index_version_get(tenant=document.tenant)
    with committed():
        response = admin_client.post(
            reverse("admin:rag_document_changelist"),
            {"action": "delete_selected", "_selected_action": [document.pk, second.pk], "post": "yes"},
        )
    assert response.status_code == 302
    assert not Document.objects.filter(case=case).exists()
    assert selectors.index_version_get(tenant=document.tenant) >= version + 2
    assert not any(default_storage.exists(name) for name in names)


def test_the_fields_copied_to_the_chunks_are_read_only(admin_client, document):
    url = reverse("admin:rag_document_change", args=[document.pk])
    form = admin_client.get(url).context["adminform"].form
    copied = {"source_type", "doc_type", "jurisdiction", "document_date", "page_starts"}
    assert copied.isdisjoint(form.fields) and {"title", "sensitivity"} <= set(form.fields)
    before = (document.source_type, document.doc_type, document.jurisdiction, document.document_date)
    data = {
        "title": "Renamed",
        "original_filename": document.original_filename,
        "sensitivity": document.sensitivity,
        "metadata": "{}",
        # Ignored: read-only on an existing document.
        "source_type": "statute",
        "doc_type": "memo",
        "jurisdiction": "Delaware",
        "document_date": "2020-01-02",
        "page_starts": "[0, 1]",
    }
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    document.refresh_from_db()
    assert document.title == "Renamed"
    assert (document.source_type, document.doc_type, document.jurisdiction, document.document_date) == before
    chunks = Chunk.objects.filter(document=document)
    assert set(chunks.values_list("doc_type", "jurisdiction")) == {(document.doc_type, document.jurisdiction)}


def test_a_title_edited_here_is_the_users_and_survives_reindexing(admin_client, case, upload, committed):
    document = Document.objects.get(pk=upload(case, "contract.txt").document.pk)
    assert (document.title, document.title_source) == ("Master Purchase Agreement", TitleSource.TEXT)
    data = {
        "title": "Shi Farms hemp supply",
        "original_filename": document.original_filename,
        "sensitivity": document.sensitivity,
        "metadata": "{}",
    }
    url = reverse("admin:rag_document_change", args=[document.pk])
    assert admin_client.post(url, data).status_code == 302
    with committed():
        service.document_reindex(tenant=case.tenant, document_id=document.pk)
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY
    assert (document.title, document.title_source) == ("Shi Farms hemp supply", TitleSource.USER)


@pytest.mark.parametrize(
    ("field", "value"), [("title", "Supply agreement (signed)"), ("metadata", '{"year": 2024}')]
)
def test_editing_a_title_or_metadata_bumps_the_index_version(admin_client, document, field, value):
    url = reverse("admin:rag_document_change", args=[document.pk])
    data = {
        "title": document.title,
        "original_filename": document.original_filename,
        "sensitivity": document.sensitivity,
        "metadata": json.dumps(document.metadata),
    }
    version = selectors.index_version_get(tenant=document.tenant)
    assert admin_client.post(url, data).status_code == 302  # nothing changed: no bump
    assert selectors.index_version_get(tenant=document.tenant) == version
    response = admin_client.post(url, {**data, field: value})
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert selectors.index_version_get(tenant=document.tenant) > version
