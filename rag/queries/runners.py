"""Which worker runs a query job, and whether that worker is still alive.

A `running` job whose worker was killed outright (SIGKILL, OOM, a lost node) is not given back by
the Redis broker until its visibility timeout ends (an hour). To notice sooner, every worker marks
itself alive in the default cache (Redis) on each recovery sweep, and a job records the worker that
claimed it; a job whose worker's mark has expired has lost it (`runner_lost`). The marks carry a
per-start token, not the worker's node name: a worker restarted under the same name is another
worker and must not keep its predecessor's jobs alive.

The cache being down makes nothing look lost (no record is read): the time-limit rule in
`rag.queries.services.query_jobs_recover_lost` still applies.
"""

from __future__ import annotations

import uuid

from django.core.cache import cache

# Made when the worker's main process imports this module; pool processes forked from it share it.
WORKER_TOKEN = uuid.uuid4().hex

_ALIVE_KEY = "worker-alive:{}"
_RUNNER_KEY = "query-job-runner:{}"


def worker_alive_mark(*, interval: float) -> None:
    """Mark this worker alive for three sweep intervals (it marks again on every sweep)."""
    cache.set(_ALIVE_KEY.format(WORKER_TOKEN), 1, timeout=int(3 * interval) + 2)


def runner_record(*, job_id: str, timeout: float) -> None:
    """Record that this worker runs the job (for `timeout` seconds at most)."""
    cache.set(_RUNNER_KEY.format(job_id), WORKER_TOKEN, timeout=int(timeout) + 1)


def runner_lost(*, job_id: str) -> bool:
    """Whether a worker recorded as running the job has stopped marking itself alive."""
    token = cache.get(_RUNNER_KEY.format(job_id))
    return bool(token) and cache.get(_ALIVE_KEY.format(token)) is None
