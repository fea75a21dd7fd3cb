"""Bookkeeping for long work in a worker that may die: a heartbeat while a block runs (a thread with
its own database connection calls `touch` every `interval` seconds: it stamps the work's
`updated_at`), so a sweep in another worker can tell live work from work whose worker died, and a
count of the runs each piece of work has started, so a sweep gives up on work that kills its
worker every time (rag.ingest.recovery for documents, rag.review.tables.recovery for review tables).

Runs are counted in the default cache (Redis): the sweeps only run when the broker (the same Redis)
is up, and a lost count merely allows one more run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import contextmanager, suppress

from django.core.cache import cache
from django.db import connection

logger = logging.getLogger(__name__)

_RUNS_TTL = 86400


@contextmanager
def beating(touch: Callable[[], object], *, interval: float, name: str):
    """Call `touch` every `interval` seconds while the block runs; a failed beat is logged and the
    next one tried (one missed beat is harmless)."""
    stopping = threading.Event()

    def beat() -> None:
        try:
            while not stopping.wait(interval):
                try:
                    touch()
                except Exception as exc:
                    logger.warning("heartbeat failed", extra={"heartbeat": name, "error": str(exc)})
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopping.set()
        thread.join(timeout=10)


def run_started(key: str) -> int:
    """Count one more run of the work `key` names; returns the count (1 when the cache is down: no
    count, so the run is allowed)."""
    try:
        cache.add(key, 0, timeout=_RUNS_TTL)
        return cache.incr(key) or 1
    except Exception:
        return 1


def run_count(key: str) -> int:
    """How many runs of `key` have started (0 when unknown)."""
    try:
        return int(cache.get(key) or 0)
    except Exception:
        return 0


def runs_forget(key: str) -> None:
    """Forget the count (the work finished, or was queued afresh by a user)."""
    with suppress(Exception):  # the count expires by itself
        cache.delete(key)
