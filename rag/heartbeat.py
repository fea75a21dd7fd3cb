"""A heartbeat for long work in a worker: while a block runs, a thread with its own database
connection calls `touch` every `interval` seconds (it stamps the work's `updated_at`), so a sweep
in another worker can tell live work from work whose worker died (rag.ingest.recovery for
documents, rag.review.tables.recovery for review tables)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import contextmanager

from django.db import connection

logger = logging.getLogger(__name__)


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
