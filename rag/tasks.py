"""Celery tasks. They take ids, re-fetch through selectors, and call services."""

from __future__ import annotations

import logging
import threading

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

from ragsite.exceptions import NotFound
from tenants.models import Tenant

from . import selectors
from .ingest import queue, recovery, service
from .models import DocumentStatus
from .review import signals as review_signals

logger = logging.getLogger(__name__)

# Database hiccups are worth retrying; anything else is recorded on the document at once.
TRANSIENT = (OperationalError, InterfaceError)


_INGEST_RETRIES = dict(autoretry_for=TRANSIENT, retry_backoff=2, retry_backoff_max=60, max_retries=5)
# One document holds a worker process at most this long: past the soft limit the run is interrupted
# and the document fails with IngestTimeout (service.document_ingest); the hard limit kills a run
# that does not stop (the recovery bookkeeping then counts it as a lost attempt).
_INGEST_LIMITS = dict(
    soft_time_limit=settings.RAG_INGEST_TIME_LIMIT or None,
    time_limit=(settings.RAG_INGEST_TIME_LIMIT + settings.RAG_INGEST_HARD_LIMIT_MARGIN_SECONDS) or None,
)


@shared_task(bind=True, name="rag.ingest_document", **_INGEST_RETRIES, **_INGEST_LIMITS)
def ingest_document(self, document_id: int, tenant_id: int) -> str:
    """Extract, chunk, embed and index one document (progress is written on the document).

    Sent directly only when tasks run eagerly (no queue to share) or by an older release; workers
    take turns of the fair queue instead (`ingest_next`). A delivery for a document that is neither
    queued nor processing is a stale copy (e.g. the broker restoring a task whose worker was killed
    after the sweep had it run again): skipped."""
    return _ingest_run(self, Tenant.objects.get(pk=tenant_id), document_id)


@shared_task(bind=True, name="rag.ingest_next", **_INGEST_RETRIES, **_INGEST_LIMITS)
def ingest_next(self) -> str:
    """One turn of the fair ingestion queue (rag.ingest.queue): ingest the queued document whose
    tenant's turn it is; "idle" if none is queued.

    A turn delivered again after its pool process died resumes the document it took. A database
    hiccup retries the turn, which may take another document; the one taken is left `processing`
    and the recovery sweep queues it again once its heartbeat is stale."""
    turn_id = None if self.request.is_eager else self.request.id
    document = queue.document_of_turn(turn_id) or queue.document_claim_next(turn_id=turn_id)
    if document is None:
        return "idle"
    return _ingest_run(self, document.tenant, document.pk)


def _ingest_run(task, tenant: Tenant, document_id: int) -> str:
    """Ingest one document under the lost-work bookkeeping; failures are recorded on it."""
    try:
        current = selectors.document_get(tenant=tenant, document_id=document_id)
        if current.status not in (DocumentStatus.QUEUED, DocumentStatus.PROCESSING):
            return current.status
        if task.request.is_eager:  # no worker to lose
            document = service.document_ingest(tenant=tenant, document_id=document_id)
        else:
            # Counted until the run ends in any way but the worker's death (see rag.ingest.recovery).
            recovery.attempt_started(document_id)
            try:
                with recovery.heartbeat(document_id):
                    document = service.document_ingest(tenant=tenant, document_id=document_id)
            finally:
                recovery.attempts_reset(document_id)
    except NotFound:
        # Deleted while queued or processing: nothing is left to index, so the run is simply done.
        logger.info("ingest skipped: the document was deleted", extra={"document_id": document_id})
        return "deleted"
    except TRANSIENT:
        if task.request.retries >= task.max_retries:
            service.document_fail_unexpectedly(tenant=tenant, document_id=document_id)
        raise
    except Exception:
        logger.exception("ingest crashed", extra={"document_id": document_id})
        service.document_fail_unexpectedly(tenant=tenant, document_id=document_id)
        raise
    if document.status == DocumentStatus.READY and settings.RAG_CLAUSE_SIGNALS_AT_INGEST:
        # Matter review reads these for every question about a whole matter (rag.review.signals).
        review_signals.compute_quietly(document)
    return document.status


@shared_task(name="rag.verify_clause_signals", autoretry_for=TRANSIENT, retry_backoff=2, max_retries=3)
def verify_clause_signals(document_id: int, tenant_id: int) -> int:
    """Have the language model read one document's unsure clause verdicts
    (rag.review.verifier); returns how many verdicts it stored. On the ingestion queue: it is
    per-document work, like the signals it reads."""
    from .review import verifier

    try:
        document = selectors.document_get(tenant=Tenant.objects.get(pk=tenant_id), document_id=document_id)
    except NotFound:
        return 0
    return verifier.verify_quietly(document)


@shared_task(name="rag.reindex_stale_documents")
def reindex_stale_documents() -> int:
    """Queue every document embedded with another model than the configured one."""
    return sum(service.tenant_reindex(tenant=tenant, stale_only=True) for tenant in Tenant.objects.all())


@worker_ready.connect
def _reindex_after_model_change(sender=None, **_kwargs):
    # A worker that starts with a different EMBEDDING_MODEL re-embeds what the old model indexed.
    reindex_stale_documents.delay()


@shared_task(
    bind=True,
    name="rag.run_query_job",
    soft_time_limit=settings.RAG_QUERY_JOB_TIME_LIMIT,
    time_limit=settings.RAG_QUERY_JOB_TIME_LIMIT + settings.RAG_QUERY_JOB_HARD_LIMIT_MARGIN_SECONDS,
)
def run_query_job(self, job_id: str) -> str:
    """Run one async query job (rag.queries.services.query_job_run); returns its final status.

    Acknowledged late (settings), so a job whose pool process dies is delivered again and re-run,
    up to RAG_QUERY_JOB_MAX_ATTEMPTS runs; one whose whole worker died is found by the recovery
    sweep (`recover_lost_work`)."""
    from rag.queries.services import query_job_run

    return query_job_run(job_id=job_id, in_worker=not self.request.is_eager).status


@shared_task(name="rag.run_review_table")
def run_review_table(table_id: int, run: int) -> str:
    """Fill one run of a review table (rag.review.tables.fill.table_fill); returns its final
    status. On the query jobs' queue, beside the questions a table asks. A delivery for a table
    cancelled, deleted or run again since is "stale" and does nothing; one delivered again after its
    worker died resumes it, computing only the cells still missing."""
    from rag.review.tables.fill import table_fill

    return table_fill(table_id=table_id, run=run)


@shared_task(name="rag.recover_lost_work")
def recover_lost_work() -> dict:
    """Queue again (or fail, when out of attempts) the documents, query jobs and review tables whose
    worker died mid-run. Every worker runs this every RAG_RECOVERY_SWEEP_SECONDS (`_RecoverySweeper`)."""
    from rag.queries.services import query_jobs_recover_lost
    from rag.review.tables.recovery import tables_requeue_stalled

    return {
        "documents": recovery.documents_requeue_stalled(),
        "ingest_turns": queue.turns_top_up(),
        "query_jobs": query_jobs_recover_lost(),
        "review_tables": tables_requeue_stalled(),
    }


class _RecoverySweeper(threading.Thread):
    """Runs `recover_lost_work` in the worker's main process at start-up and then periodically.

    A thread rather than a scheduled task: no beat process is needed, and a sweep still runs while
    the worker's pool is busy. Sweeps of several workers do not collide (conditional UPDATEs)."""

    def __init__(self, interval: float):
        super().__init__(name="lexrag-recovery-sweeper", daemon=True)
        self.interval = interval
        self.stopping = threading.Event()

    def run(self) -> None:
        from rag.queries.runners import worker_alive_mark

        while True:
            try:
                worker_alive_mark(interval=self.interval)
                found = recover_lost_work()
                if any(found.values()):
                    logger.warning("recovered work of lost workers", extra=found)
            except Exception:  # the database or broker is down: try again next time
                logger.exception("recovery sweep failed")
            finally:
                connections.close_all()  # this thread's connections only
            if self.stopping.wait(self.interval):
                return


_sweeper: _RecoverySweeper | None = None


@worker_ready.connect
def _start_recovery_sweeper(sender=None, **_kwargs):
    global _sweeper
    if _sweeper is None and settings.RAG_RECOVERY_SWEEP_SECONDS > 0:
        _sweeper = _RecoverySweeper(settings.RAG_RECOVERY_SWEEP_SECONDS)
        _sweeper.start()


@worker_shutdown.connect
def _stop_recovery_sweeper(sender=None, **_kwargs):
    if _sweeper is not None:
        _sweeper.stopping.set()
