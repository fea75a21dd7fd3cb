"""The recovery sweep (rag.tasks.recover_lost_work): documents and query jobs whose worker died
mid-run are queued again, or failed once out of attempts; live work is left alone.
The end-to-end version, with real workers killed, is tests/reliability/test_worker_killed.py."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from rag import services as rag_services
from rag.ingest import recovery
from rag.models import Document, DocumentStatus, JobStatus, QueryJob
from rag.queries import runners, services
from rag.queries.caller import Caller
from tenants.models import Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    """Job ids handed to the queue by the sweep (recorded instead of run)."""
    seen: list[str] = []
    monkeypatch.setattr(services, "_enqueue", lambda job: seen.append(job.job_id))
    return seen


def running_job(tenant, *, attempts=1, started_ago=1.0) -> QueryJob:
    caller = Caller(tenant=tenant, role=Role.VIEWER, api_key_prefix="abcd1234")
    job, _ = services.query_job_submit(
        caller=caller, question="What is the notice period?", options={}, enqueue=False
    )
    started = timezone.now() - timedelta(seconds=started_ago)
    QueryJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, attempts=attempts, started_at=started)
    return job


def test_a_job_whose_worker_stopped_marking_itself_alive_is_queued_again(tenant, enqueued):
    job = running_job(tenant)
    runners.runner_record(job_id=job.job_id, timeout=60)
    runners.worker_alive_mark(interval=1)
    assert services.query_jobs_recover_lost() == 0  # its worker is alive
    cache.delete(f"worker-alive:{runners.WORKER_TOKEN}")  # the mark expired: the worker is gone

    assert services.query_jobs_recover_lost() == 1
    job.refresh_from_db()
    assert (job.status, job.attempts, enqueued) == (JobStatus.QUEUED, 1, [job.job_id])
    assert services.query_jobs_recover_lost() == 0  # taken once, even by several sweeps


def test_a_job_past_its_hard_limit_is_queued_again_even_without_a_runner_record(tenant, enqueued):
    recent = running_job(tenant)
    old = running_job(tenant, started_ago=services.query_job_lost_after().total_seconds() + 5)
    assert services.query_jobs_recover_lost() == 1
    assert enqueued == [old.job_id]
    recent.refresh_from_db()
    assert recent.status == JobStatus.RUNNING  # no record of its runner, within its limits: left alone


def test_a_lost_job_out_of_attempts_is_failed_not_queued(tenant, settings, enqueued):
    job = running_job(tenant, attempts=settings.RAG_QUERY_JOB_MAX_ATTEMPTS, started_ago=10_000)
    assert services.query_jobs_recover_lost() == 1
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and enqueued == []
    assert (job.error["error_type"], job.error["status"]) == ("WorkerLost", 503)


def processing_document(tenant, *, silent_for: float) -> Document:
    case = rag_services.case_create(tenant=tenant, name=f"Matter {timezone.now().timestamp()}")
    document = Document.objects.create(
        tenant=tenant,
        case=case,
        title="Supply",
        original_filename="supply.txt",
        file="x/supply.txt",
        mime_type="text/plain",
        size_bytes=10,
        sha256="0" * 64,
        status=DocumentStatus.PROCESSING,
        stage="embedding 32/80",
        progress=40,
    )
    Document.objects.filter(pk=document.pk).update(updated_at=timezone.now() - timedelta(seconds=silent_for))
    return document


def test_a_document_whose_heartbeat_stopped_is_queued_again(
    tenant, settings, django_capture_on_commit_callbacks
):
    live = processing_document(tenant, silent_for=1)
    lost = processing_document(tenant, silent_for=settings.RAG_INGEST_STALL_SECONDS + 1)
    recovery.attempts_reset(lost.pk)
    with django_capture_on_commit_callbacks() as callbacks:
        assert recovery.documents_requeue_stalled() == 1
    assert len(callbacks) == 1  # the ingest task, queued once the change commits
    lost.refresh_from_db()
    live.refresh_from_db()
    assert (lost.status, lost.progress) == (DocumentStatus.QUEUED, 0)
    assert live.status == DocumentStatus.PROCESSING


def test_a_document_that_lost_its_worker_too_often_is_failed(tenant, settings):
    lost = processing_document(tenant, silent_for=settings.RAG_INGEST_STALL_SECONDS + 1)
    recovery.attempts_reset(lost.pk)
    for _ in range(settings.RAG_INGEST_MAX_ATTEMPTS):
        recovery.attempt_started(lost.pk)
    assert recovery.documents_requeue_stalled() == 0
    lost.refresh_from_db()
    assert (lost.status, lost.error_type) == (DocumentStatus.FAILED, "WorkerLost")
    recovery.attempts_reset(lost.pk)


def test_the_heartbeat_keeps_a_processing_document_fresh(tenant, settings, transactional_db):
    document = processing_document(tenant, silent_for=settings.RAG_INGEST_STALL_SECONDS + 1)
    before = Document.objects.get(pk=document.pk).updated_at
    with recovery.heartbeat(document.pk, interval=0.05):
        deadline = timezone.now() + timedelta(seconds=10)
        while Document.objects.get(pk=document.pk).updated_at == before and timezone.now() < deadline:
            time.sleep(0.02)
    assert Document.objects.get(pk=document.pk).updated_at > before
    assert recovery.documents_requeue_stalled() == 0
