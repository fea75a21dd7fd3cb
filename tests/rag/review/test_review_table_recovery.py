"""A review table whose worker died mid-run: the recovery sweep queues it again for the same run,
which then fills only the cells still missing; a live table (its heartbeat fresh) is left alone; one
that lost its worker too often fails with WorkerLost."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from rag.review.tables import fill, recovery, services
from rag.review.tables.models import ReviewCell, ReviewStatus, ReviewTable

from .test_review_tables import admin, matter  # noqa: F401 (the fixture)

COLUMNS = [{"question": "When are invoices payable?"}]


@pytest.fixture
def enqueued(monkeypatch):
    """Tables handed to the queue by the sweep (recorded instead of run)."""
    seen: list[tuple[int, int]] = []
    monkeypatch.setattr(services, "table_enqueue", lambda table: seen.append((table.pk, table.run)))
    return seen


def silent_running_table(tenant, case, *, silent_for: float) -> ReviewTable:
    table = services.review_table_create(
        caller=admin(tenant), case_id=case.pk, columns=COLUMNS, enqueue=False
    )
    ReviewTable.objects.filter(pk=table.pk).update(
        status=ReviewStatus.RUNNING, updated_at=timezone.now() - timedelta(seconds=silent_for)
    )
    recovery.attempts_reset(table.pk, table.run)
    return table


class WorkerKilled(BaseException):
    """The worker's process dying mid-cell: nothing in the job handles it."""


@pytest.mark.django_db
def test_a_table_that_lost_its_worker_is_resumed_filling_only_the_missing_cells(
    tenant,
    matter,  # noqa: F811
    settings,
    enqueued,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    case, _ = matter
    table = services.review_table_create(
        caller=admin(tenant), case_id=case.pk, columns=COLUMNS, enqueue=False
    )
    asked, real = [], fill.run_query

    def dies_on_the_second_cell(**kwargs):
        asked.append(kwargs["filters"]["document_ids"][0])
        if len(asked) == 2:
            raise WorkerKilled
        return real(**kwargs)

    monkeypatch.setattr(fill, "run_query", dies_on_the_second_cell)
    with pytest.raises(WorkerKilled):
        fill.table_fill(table_id=table.pk, run=table.run)
    assert ReviewTable.objects.get(pk=table.pk).status == ReviewStatus.RUNNING  # frozen, as seen by users
    assert recovery.tables_requeue_stalled() == 0  # its heartbeat is recent: maybe alive
    stale = timezone.now() - timedelta(seconds=settings.RAG_INGEST_STALL_SECONDS + 1)
    ReviewTable.objects.filter(pk=table.pk).update(updated_at=stale)

    with django_capture_on_commit_callbacks(execute=True):
        assert recovery.tables_requeue_stalled() == 1
    assert enqueued == [(table.pk, table.run)]
    assert recovery.tables_requeue_stalled() == 0  # taken once, even by several sweeps
    assert ReviewTable.objects.get(pk=table.pk).status == ReviewStatus.QUEUED
    asked.clear()
    monkeypatch.setattr(fill, "run_query", lambda **kwargs: (asked.append(kwargs), real(**kwargs))[1])
    assert fill.table_fill(table_id=table.pk, run=table.run) == ReviewStatus.DONE
    table.refresh_from_db()
    assert (table.done, table.total) == (3, 3) and len(asked) == 2  # the first cell was kept
    assert ReviewCell.objects.filter(table=table).count() == 3


@pytest.mark.django_db
def test_a_table_that_lost_its_worker_too_often_fails(tenant, matter, settings, enqueued):  # noqa: F811
    case, _ = matter
    table = silent_running_table(tenant, case, silent_for=settings.RAG_INGEST_STALL_SECONDS + 1)
    for _ in range(settings.RAG_INGEST_MAX_ATTEMPTS):
        recovery.attempt_started(table.pk, table.run)
    assert recovery.tables_requeue_stalled() == 0 and enqueued == []
    table.refresh_from_db()
    assert table.status == ReviewStatus.FAILED and table.error["error_type"] == "WorkerLost"
    recovery.attempts_reset(table.pk, table.run)


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_keeps_a_running_table_fresh(tenant, matter, settings):  # noqa: F811
    case, _ = matter
    table = silent_running_table(tenant, case, silent_for=settings.RAG_INGEST_STALL_SECONDS + 1)
    before = ReviewTable.objects.get(pk=table.pk).updated_at
    with recovery.heartbeat(table.pk, table.run, interval=0.05):
        deadline = time.monotonic() + 10
        while ReviewTable.objects.get(pk=table.pk).updated_at == before and time.monotonic() < deadline:
            time.sleep(0.02)
    assert ReviewTable.objects.get(pk=table.pk).updated_at > before
    assert recovery.tables_requeue_stalled() == 0
