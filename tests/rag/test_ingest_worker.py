"""Ingestion as a real Celery job: upload returns at once, a worker on the Redis broker ingests,
progress is visible while it runs."""

import time

import pytest

from rag import selectors
from rag import services as rag_services
from rag.ingest import service
from rag.models import DocumentStatus
from tests.rag.conftest import fixture_bytes


@pytest.mark.integration
@pytest.mark.slow
def test_upload_returns_queued_and_a_worker_makes_it_ready(celery_worker, tenant):
    case = rag_services.case_create(tenant=tenant, name="Worker matter")
    result = service.document_upload(
        tenant=tenant, case=case, filename="contract.pdf", content=fixture_bytes("contract.pdf")
    )
    assert result.document.status == DocumentStatus.QUEUED  # returned before any work was done

    seen = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        document = selectors.document_get(tenant=tenant, document_id=result.document.pk)
        seen.append((document.status, document.progress, document.stage))
        if document.status in (DocumentStatus.READY, DocumentStatus.FAILED):
            break
        time.sleep(0.2)
    assert document.status == DocumentStatus.READY, (document.error_type, document.error_message)
    progress = [p for _, p, _ in seen]
    assert progress == sorted(progress), "progress went backwards"
    assert progress[-1] == 100
    chunks = list(selectors.chunk_list(tenant=tenant, document_id=document.pk))
    assert len(chunks) == document.chunk_count > 0
    assert all(document.text[c.char_start : c.char_end] == c.text for c in chunks)
