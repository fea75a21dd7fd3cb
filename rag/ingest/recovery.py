"""Ingestion that lost its worker: a heartbeat while a document is ingested, and a sweep that
queues a document again once its heartbeat stops.

Why: tasks are acknowledged late, but with the Redis broker a task whose whole worker was killed
(SIGKILL, OOM killer, lost node) stays in Redis's "unacked" set until the broker's visibility
timeout (an hour) has passed; only a worker whose *pool process* died gives it back at once
(CELERY_TASK_REJECT_ON_WORKER_LOST). Until then the document would sit in `processing`.

So a worker ingesting a document touches its `updated_at` every RAG_INGEST_HEARTBEAT_SECONDS
(progress writes do too), and every worker sweeps (rag.tasks): a document `processing` whose
`updated_at` is older than RAG_INGEST_STALL_SECONDS is set back to `queued` and queued again, at
most RAG_INGEST_MAX_ATTEMPTS runs in all (then it fails with `WorkerLost`: a file that kills its
worker every time must not loop forever). Re-running is safe: chunks are replaced in one
transaction, and passages already embedded are not embedded again. When the broker finally
redelivers the original task, the document is no longer queued or processing and the task skips it.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..heartbeat import beating, run_count, run_started, runs_forget
from ..models import Document, DocumentStatus
from . import service

logger = logging.getLogger(__name__)

_ATTEMPTS_KEY = "ingest-attempts:{}"


def heartbeat(document_id: int, *, interval: float | None = None):
    """While the block runs, touch the document's `updated_at` every `interval` seconds, so the sweep
    can tell a live ingestion from a lost one (a context manager)."""
    interval = settings.RAG_INGEST_HEARTBEAT_SECONDS if interval is None else interval
    processing = Document.objects.filter(pk=document_id, status=DocumentStatus.PROCESSING)
    return beating(
        lambda: processing.update(updated_at=timezone.now()),
        interval=interval,
        name=f"ingest-heartbeat-{document_id}",
    )


def attempt_started(document_id: int) -> int:
    """Count one more ingestion run of the document; returns the count (1 if the cache is down)."""
    return run_started(_ATTEMPTS_KEY.format(document_id))


def attempts_reset(document_id: int) -> None:
    """Forget the run count (the document was ingested or queued afresh by a user)."""
    runs_forget(_ATTEMPTS_KEY.format(document_id))


def documents_requeue_stalled(*, now=None) -> int:
    """Queue again every document whose ingestion lost its worker (see the module docstring);
    fail those out of attempts. Returns how many were queued again. Safe to run from several
    workers at once: each document is taken by one conditional UPDATE."""
    now = now or timezone.now()
    stalled_before = now - timedelta(seconds=settings.RAG_INGEST_STALL_SECONDS)
    # A maintenance sweep over every tenant, like reindexing after a model change.
    stalled = Document.objects.filter(status=DocumentStatus.PROCESSING, updated_at__lt=stalled_before)
    requeued = 0
    for document in stalled.select_related("tenant"):
        taken = Document.objects.filter(
            pk=document.pk, status=DocumentStatus.PROCESSING, updated_at__lt=stalled_before
        )
        runs = run_count(_ATTEMPTS_KEY.format(document.pk))
        if runs >= settings.RAG_INGEST_MAX_ATTEMPTS:
            if taken.update(updated_at=now):
                logger.error(
                    "ingest lost its worker too often", extra={"document_id": document.pk, "runs": runs}
                )
                service.document_fail(
                    document,
                    "WorkerLost",
                    f"Ingestion stopped {runs} times because its worker died; the file may be too large "
                    "to process. Try reindexing; if it persists, contact support.",
                )
            continue
        with transaction.atomic():
            if not taken.update(
                status=DocumentStatus.QUEUED, progress=0, stage="queued again", updated_at=now
            ):
                continue  # another worker's sweep took it, or it came back to life
            transaction.on_commit(lambda document=document: service.ingest_enqueue(document))
        logger.warning(
            "ingest lost its worker: queued again", extra={"document_id": document.pk, "runs": runs}
        )
        requeued += 1
    return requeued
