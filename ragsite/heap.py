"""Keep the cyclic garbage collector off the long-lived heap.

A web or worker process loads the embedding model (torch, tokenizers: several hundred thousand
tracked objects) once and keeps it for life. CPython's cyclic collector still walks every one of
them on each full collection, which under load (bench/api_load.py) cost a cache-hit request more
CPU than its database work. After such a load, `freeze_long_lived()` collects once and moves what
is alive into the permanent generation, which collections skip. Frozen objects are still freed by
reference counting when dropped; only reference cycles among them would wait for `gc.unfreeze()`,
and what is frozen here (models, Django's import-time state) lives as long as the process.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()


def freeze_long_lived() -> int:
    """Collect garbage, then exempt every surviving object from later collections; returns how
    many objects are frozen now."""
    with _lock:
        gc.collect()
        gc.freeze()
        return gc.get_freeze_count()
