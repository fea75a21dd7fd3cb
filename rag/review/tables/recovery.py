"""Review tables that lost their worker: a heartbeat while a table is filled, and a sweep that
resumes a table once its heartbeat stops.

A table's job is acknowledged late, but with the Redis broker a job whose whole worker was killed
stays unacknowledged until the broker's visibility timeout (an hour): the table would show
"running" with its progress frozen. So the filling worker stamps the table's `updated_at` every
RAG_INGEST_HEARTBEAT_SECONDS (cells do too), and every worker's recovery sweep (rag.tasks) queues a
`running` table whose stamp is older than RAG_INGEST_STALL_SECONDS again, for the same run: the
job computes only the cells still missing. After RAG_INGEST_MAX_ATTEMPTS lost runs the table fails
with `WorkerLost` (a table that kills its worker every time must not loop forever).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from rag.heartbeat import beating, run_count, run_started, runs_forget

from .models import ReviewStatus, ReviewTable

logger = logging.getLogger(__name__)

_ATTEMPTS_KEY = "review-table-attempts:{}:{}"  # table, run


def heartbeat(table_id: int, run: int, *, interval: float | None = None):
    """While the block fills run `run` of the table, stamp its `updated_at` (a context manager)."""
    interval = settings.RAG_INGEST_HEARTBEAT_SECONDS if interval is None else interval
    running = ReviewTable.objects.filter(pk=table_id, run=run, status=ReviewStatus.RUNNING)
    return beating(
        lambda: running.update(updated_at=timezone.now()), interval=interval, name=f"review-table-{table_id}"
    )


def attempt_started(table_id: int, run: int) -> int:
    """Count one more fill of the run; returns the count (1 when the cache is down)."""
    return run_started(_ATTEMPTS_KEY.format(table_id, run))


def attempts_reset(table_id: int, run: int) -> None:
    """Forget the run's count (it finished)."""
    runs_forget(_ATTEMPTS_KEY.format(table_id, run))


def tables_requeue_stalled(*, now=None) -> int:
    """Queue again every running table whose worker died (see the module docstring); fail those out
    of attempts. Returns how many were queued again. Safe from several workers at once: each table
    is taken by one conditional UPDATE."""
    from .services import table_enqueue

    now = now or timezone.now()
    stalled_before = now - timedelta(seconds=settings.RAG_INGEST_STALL_SECONDS)
    # A maintenance sweep over every tenant, like the documents' own.
    stalled = ReviewTable.objects.filter(status=ReviewStatus.RUNNING, updated_at__lt=stalled_before)
    requeued = 0
    for table in stalled:
        taken = ReviewTable.objects.filter(
            pk=table.pk, run=table.run, status=ReviewStatus.RUNNING, updated_at__lt=stalled_before
        )
        runs = run_count(_ATTEMPTS_KEY.format(table.pk, table.run))
        if runs >= settings.RAG_INGEST_MAX_ATTEMPTS:
            error = {
                "error_type": "WorkerLost",
                "message": f"Filling the table stopped {runs} times because its worker died; run it again.",
            }
            if taken.update(status=ReviewStatus.FAILED, error=error, finished_at=now, updated_at=now):
                logger.error("review table lost its worker too often", extra={"table_id": table.pk})
            continue
        with transaction.atomic():
            if not taken.update(status=ReviewStatus.QUEUED, updated_at=now):
                continue  # another worker's sweep took it, or it came back to life
            transaction.on_commit(lambda table=table: table_enqueue(table))
        logger.warning("review table lost its worker: queued again", extra={"table_id": table.pk})
        requeued += 1
    return requeued
