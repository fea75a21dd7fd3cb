"""Bulk ingestion on worker processes (manage.py ingest --jobs): each file goes to the first free
worker, and each worker runs the model on one torch thread.

One process embedding on every core leaves a core idle whenever it reads, scans or writes a file;
N processes of one thread each keep the cores busy (on two cores about 1.2x the throughput;
bench/README, "Ingestion at archive size"). Workers are spawned, not forked, so no torch thread
pool or database connection of the parent is inherited. This module imports no model at import
time: a spawned worker unpickles its functions before Django is set up.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

Outcome = tuple[str, int, str]  # status ("ok", "duplicate", "failed", "known"), passages, reason


class FileIngest:
    """Ingests one file by its path into a case: (status, passages indexed, reason). Picklable by
    ids, so a worker process can run it."""

    def __init__(self, *, tenant_id: int, case_id: int, fields: dict):
        self.tenant_id, self.case_id, self.fields = tenant_id, case_id, fields

    def __call__(self, path: Path) -> Outcome:
        from rag.ingest import service
        from rag.models import Case
        from tenants.models import Tenant

        tenant = Tenant.objects.get(pk=self.tenant_id)
        result = service.ingest_now(
            tenant=tenant,
            case=Case.objects.get(pk=self.case_id, tenant=tenant),
            filename=path.name,
            content=path.read_bytes(),
            fields=service.DocumentFields(**self.fields),
        )
        passages = result.document.chunk_count if result.status == "ok" else 0
        return result.status, passages, result.reason


def ingested(items: Iterable[Path | str], ingest: Callable[[Path], Outcome], jobs: int) -> Iterator[tuple]:
    """(path, outcome) of each item as it ends: a file ingested by `ingest(path)`, in this process
    (`jobs` 1) or on the first free of `jobs` workers (at most twice as many files sent ahead), or a
    word ("known", "duplicate") passed on as the outcome (word, 0, "") with no path."""
    if jobs == 1:
        for item in items:
            yield (None, (item, 0, "")) if isinstance(item, str) else (item, ingest(item))
        return
    from django.conf import settings
    from django.db import connections

    connections.close_all()  # the workers open their own
    context = multiprocessing.get_context("spawn")
    pending: dict[Future, Path] = {}
    with ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_setup, initargs=(settings.DATABASES,)
    ) as pool:
        for item in items:
            if isinstance(item, str):
                yield None, (item, 0, "")
                continue
            while len(pending) >= 2 * jobs:
                yield from _finished(pending)
            pending[pool.submit(ingest, item)] = item
        while pending:
            yield from _finished(pending)


def _finished(pending: dict[Future, Path]) -> Iterator[tuple[Path, Outcome]]:
    done, _ = wait(pending, return_when=FIRST_COMPLETED)
    for future in done:
        yield pending.pop(future), future.result()


def _setup(databases: dict) -> None:
    """A worker: Django set up on the parent's databases (a test run's; the embedded server's
    address as the parent resolved it) and one torch thread, as its siblings use the other cores."""
    import django
    import torch
    from django.conf import settings

    settings.DATABASES = databases  # before any connection is opened
    django.setup()
    torch.set_num_threads(1)
