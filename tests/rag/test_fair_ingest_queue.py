"""The fair ingestion queue (#20): tenants take turns, so tenant B's one file does not wait behind
tenant A's whole batch; limits per tenant; robust to lost turns."""

from __future__ import annotations

import random
import time
import uuid
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from rag import services as rag_services
from rag.ingest import queue, service
from rag.models import Document, DocumentStatus

WORDS = ["party", "agree", "term", "notice", "breach", "clause", "liability", "supplier"]
WORDS += ["payment", "deliver", "goods", "law", "court", "indemnify", "warrant", "assign"]


def _text(seed: int, passages: int) -> bytes:
    """Distinct text (no passage shared with another file, so nothing is reused) of about
    `passages` passages."""
    rng = random.Random(seed)
    sentences = (
        " ".join(rng.choice(WORDS) for _ in range(14)).capitalize() + "." for _ in range(passages * 8)
    )
    return " ".join(sentences).encode()


def _queue(tenant, case, count: int, *, seed: int) -> list[Document]:
    return [
        service.document_upload(
            tenant=tenant, case=case, filename=f"f{seed}-{n}.txt", content=_text(seed + n, 3), enqueue=False
        ).document
        for n in range(count)
    ]


def _finish(document: Document) -> None:
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.READY)


@pytest.mark.django_db
def test_tenants_take_turns_whatever_order_they_queued_in(tenant, other_tenant):
    a_docs = _queue(tenant, rag_services.case_create(tenant=tenant, name="A"), 4, seed=0)
    b_docs = _queue(other_tenant, rag_services.case_create(tenant=other_tenant, name="B"), 1, seed=100)
    order = []
    while (document := queue.document_claim_next()) is not None:
        assert document.status == DocumentStatus.PROCESSING
        order.append(document.pk)
        _finish(document)
    a = [d.pk for d in a_docs]
    assert order == [a[0], b_docs[0].pk, *a[1:]]  # B's one file second, not fifth


@pytest.mark.django_db
def test_a_tenant_with_a_document_running_waits_for_one_without(tenant, other_tenant):
    a_docs = _queue(tenant, rag_services.case_create(tenant=tenant, name="A"), 3, seed=0)
    b_docs = _queue(other_tenant, rag_services.case_create(tenant=other_tenant, name="B"), 2, seed=100)
    first = queue.document_claim_next()  # A's, still running
    second = queue.document_claim_next()  # B's: A already has one running
    third = queue.document_claim_next()  # one running each: the longest since its turn, A
    assert [first.pk, second.pk, third.pk] == [a_docs[0].pk, b_docs[0].pk, a_docs[1].pk]


@pytest.mark.django_db
def test_nothing_queued_is_an_idle_turn(tenant):
    assert queue.document_claim_next() is None


@pytest.mark.django_db
def test_a_document_whose_turn_was_lost_is_ingested_after_the_sweep(tenant, redis_url, settings):
    (document,) = _queue(tenant, rag_services.case_create(tenant=tenant, name="A"), 1, seed=0)
    fresh = queue.turns_top_up()
    assert fresh == 0  # waiting less than the stall time: its turn may still be on its way
    waited = timezone.now() - timedelta(seconds=settings.RAG_INGEST_STALL_SECONDS + 1)
    Document.objects.filter(pk=document.pk).update(updated_at=waited)
    assert queue.turns_top_up() == 1  # the broker holds no turn for it (tasks run eagerly here)
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY


@pytest.mark.integration
@pytest.mark.slow
def test_one_file_of_tenant_b_is_not_held_behind_tenant_a_batch(celery_worker, tenant, other_tenant):
    case_a = rag_services.case_create(tenant=tenant, name="Fifty contracts")
    case_b = rag_services.case_create(tenant=other_tenant, name="One letter")
    batch = [SimpleUploadedFile(f"contract-{n}.txt", _text(n, 6)) for n in range(8)]
    a_docs = [r.document for r in service.documents_upload(tenant=tenant, case=case_a, files=batch)]
    letter = service.document_upload(
        tenant=other_tenant, case=case_b, filename="letter.txt", content=_text(999, 1)
    ).document

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        letter.refresh_from_db()
        if letter.status in (DocumentStatus.READY, DocumentStatus.FAILED):
            break
        time.sleep(0.2)
    assert letter.status == DocumentStatus.READY, (letter.error_type, letter.error_message)
    a_ready_first = Document.objects.filter(pk__in=[d.pk for d in a_docs], status=DocumentStatus.READY)
    # With one FIFO queue all 8 of A's would be ready first; with turns, at most the one running
    # when B uploaded and the one the worker took before B's turn arrived.
    assert a_ready_first.count() <= 2


@pytest.mark.django_db
def test_a_turn_delivered_again_resumes_the_document_it_took(tenant, other_tenant, redis_url):
    (taken,) = _queue(tenant, rag_services.case_create(tenant=tenant, name="A"), 1, seed=0)
    _queue(other_tenant, rag_services.case_create(tenant=other_tenant, name="B"), 1, seed=100)
    turn = f"turn-{uuid.uuid4().hex}"
    assert queue.document_claim_next(turn_id=turn).pk == taken.pk
    # Its pool process died: the broker hands the same turn back; it goes on with the same document.
    assert queue.document_of_turn(turn).pk == taken.pk
    assert queue.document_of_turn(f"turn-{uuid.uuid4().hex}") is None
    _finish(taken)
    assert queue.document_of_turn(turn) is None  # done meanwhile: the turn takes the next one
