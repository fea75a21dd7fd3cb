"""Celery tasks. They take ids, re-fetch through selectors, and call services."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError

from ragsite.exceptions import NotFound
from tenants.models import Tenant

from .ingest import service

logger = logging.getLogger(__name__)

# Database hiccups are worth retrying; anything else is recorded on the document at once.
TRANSIENT = (OperationalError, InterfaceError)


@shared_task(
    bind=True,
    name="rag.ingest_document",
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=5,
)
def ingest_document(self, document_id: int, tenant_id: int) -> str:
    """Extract, chunk, embed and index one document (progress is written on the document)."""
    tenant = Tenant.objects.get(pk=tenant_id)
    try:
        document = service.document_ingest(tenant=tenant, document_id=document_id)
    except NotFound:
        return "deleted"  # removed while queued: nothing to do
    except TRANSIENT:
        if self.request.retries >= self.max_retries:
            service.document_fail_unexpectedly(tenant=tenant, document_id=document_id)
        raise
    except Exception:
        logger.exception("ingest crashed", extra={"document_id": document_id})
        service.document_fail_unexpectedly(tenant=tenant, document_id=document_id)
        raise
    return document.status


@shared_task(name="rag.reindex_stale_documents")
def reindex_stale_documents() -> int:
    """Queue every document embedded with another model than the configured one."""
    return sum(service.tenant_reindex(tenant=tenant, stale_only=True) for tenant in Tenant.objects.all())


@worker_ready.connect
def _reindex_after_model_change(sender=None, **_kwargs):
    # A worker that starts with a different EMBEDDING_MODEL re-embeds what the old model indexed.
    reindex_stale_documents.delay()


@shared_task(
    name="rag.run_query_job",
    soft_time_limit=settings.RAG_QUERY_JOB_TIME_LIMIT,
    time_limit=settings.RAG_QUERY_JOB_TIME_LIMIT + 30,
)
def run_query_job(job_id: str) -> str:
    """Run one async query job (rag.queries.services.query_job_run); returns its final status.

    Acknowledged late (settings), so a job whose worker dies is delivered again and re-run, up to
    RAG_QUERY_JOB_MAX_ATTEMPTS runs."""
    from rag.queries.services import query_job_run

    return query_job_run(job_id=job_id).status
