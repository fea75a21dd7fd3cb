"""Prometheus multi-process mode: with PROMETHEUS_MULTIPROC_DIR set, every process of the deployment
(gunicorn workers, `runserver`, Celery workers and their pool processes) writes its counts to files
in that one shared directory, and /metrics and each tenant's admin/metrics add them all up
(rag.pipeline.metrics.collect). Without it a Celery worker's counts (async query jobs, ingestion)
stayed in the worker and were never exported.

Files are named by `process_identifier()`, host and pid, not the pid alone: containers sharing the
directory (docker-compose's web, worker and query-worker) each number their processes from 1, and two
processes writing one file would corrupt it.
"""

from __future__ import annotations

import glob
import os
import re
import socket

from prometheus_client import multiprocess, values

ENV = "PROMETHEUS_MULTIPROC_DIR"
# prometheus_client splits file names on "_" (e.g. gauge_livesum_<id>.db): none in the host part.
_HOST = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname()) or "host"


def directory() -> str | None:
    return os.environ.get(ENV) or None


def process_identifier(pid: int | None = None) -> str:
    """The name of process `pid` (this one by default) in the directory's file names."""
    return f"{_HOST}-{os.getpid() if pid is None else pid}"


def install() -> None:
    """Write metrics to the shared directory, named by `process_identifier`, when PROMETHEUS_MULTIPROC_DIR
    is set. Called as the `ragsite` package is imported, before any metric value exists."""
    path = directory()
    if not path:
        return
    os.makedirs(path, exist_ok=True)  # a worker may start before the web server creates it
    values.ValueClass = values.MultiProcessValue(process_identifier=process_identifier)


def mark_dead(pid: int | None = None) -> None:
    """Drop the live gauges of process `pid` (this one by default) as it exits; its counts stay."""
    if directory():
        multiprocess.mark_process_dead(process_identifier(pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_dead_files() -> None:
    """Delete the files of this host's processes that are gone (an earlier run of this server,
    whose counts must not add up to the new run's), keeping those of live processes (a Celery worker
    on this host) and of other hosts (other containers on a shared volume)."""
    path = directory()
    if not path:
        return
    os.makedirs(path, exist_ok=True)
    prefix = f"{_HOST}-"
    for name in glob.glob(os.path.join(path, "*.db")):
        identifier = os.path.basename(name)[: -len(".db")].rsplit("_", 1)[-1]
        # A bare pid: a file of an earlier version, which named files by pid alone.
        pid = identifier[len(prefix) :] if identifier.startswith(prefix) else identifier
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            os.remove(name)
