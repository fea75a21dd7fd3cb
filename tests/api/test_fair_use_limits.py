"""Fair use (#20): per-tenant limits on documents, bytes, waiting ingestion jobs and passages per
document, each a setting overridable per tenant, refused with a clear 413/429 and nothing stored."""

from __future__ import annotations

import pytest
from django.test import override_settings

from rag.models import Document, DocumentStatus
from tests.api.conftest_docs import *  # noqa: F403  (fixtures)
from tests.api.conftest_docs import CASES, DOCUMENTS, stored_files, upload_file

pytestmark = pytest.mark.django_db


def _upload(client, case, *files):
    return client.post(f"{CASES}/{case.pk}/documents", {"files": list(files)}, format="multipart")


def _note(n: int, size: int = 200):
    return upload_file(f"note{n}.txt", (f"Note {n}. " * size)[:size].encode())


@override_settings(RAG_TENANT_MAX_DOCUMENTS=3)
def test_documents_past_the_tenant_limit_are_413_and_the_batch_is_not_stored(
    case, member_client, queued_document
):
    queued_document(case, "one.txt")
    before = stored_files()
    response = _upload(member_client, case, _note(1), _note(2), _note(3))
    assert response.status_code == 413
    body = response.json()
    assert body["error_type"] == "QuotaExceeded"
    assert "3 documents" in body["message"] and "has 1 documents" in body["message"]
    assert body["details"] == {"limit": "max_documents", "allowed": 3, "used": 1, "adding": 3}
    assert Document.objects.filter(case=case).count() == 1 and stored_files() == before
    assert _upload(member_client, case, _note(1), _note(2)).status_code == 201  # exactly to the limit


def test_bytes_past_the_tenant_limit_are_413_and_a_tenant_override_wins(case, member_client, tenant):
    tenant.max_bytes = 1000
    tenant.save()
    response = _upload(member_client, case, _note(1, 600), _note(2, 600))
    assert response.status_code == 413
    assert response.json()["error_type"] == "QuotaExceeded"
    assert response.json()["details"]["limit"] == "max_bytes"
    assert not Document.objects.filter(case=case).exists()
    assert _upload(member_client, case, _note(1, 600)).status_code == 201


@override_settings(RAG_TENANT_MAX_CONCURRENT_INGESTS=2)
def test_too_many_waiting_ingestion_jobs_are_429_per_tenant(
    case, other_case, member_client, other_admin_client, queued_document
):
    queued_document(case, "a.txt")
    queued_document(case, "b.txt")
    response = _upload(member_client, case, _note(1))
    assert response.status_code == 429
    body = response.json()
    assert body["error_type"] == "TooManyIngestJobs"
    assert "2 documents queued" in body["message"] and "limit of 2" in body["message"]
    assert Document.objects.filter(case=case).count() == 2
    # Another tenant's queue is its own.
    assert _upload(other_admin_client, other_case, _note(1)).status_code == 201
    # A reindex would queue one more job too; finished documents free the queue.
    ready = queued_document(case, "c.txt")
    Document.objects.filter(pk=ready.pk).update(status=DocumentStatus.READY)
    assert member_client.post(f"{DOCUMENTS}/{ready.pk}/reindex").status_code == 429
    Document.objects.filter(case=case).update(status=DocumentStatus.READY)
    assert _upload(member_client, case, _note(1)).status_code == 201


@override_settings(RAG_MAX_PASSAGES_PER_DOCUMENT=3, RAG_CHUNK_SIZE=200, RAG_CHUNK_OVERLAP=0)
def test_a_document_making_too_many_passages_fails_before_embedding(case, member_client, committed):
    long_text = " ".join(f"Clause {n}. The supplier shall deliver the goods on time." for n in range(60))
    with committed():
        response = _upload(member_client, case, upload_file("long.txt", long_text.encode()))
    assert response.status_code == 201
    (document,) = response.json()["documents"]
    shown = member_client.get(f"{DOCUMENTS}/{document['id']}").json()
    assert (shown["status"], shown["error_type"], shown["chunk_count"]) == ("failed", "DocumentTooLarge", 0)
    assert "limit is 3 passages per document" in shown["error_message"]
