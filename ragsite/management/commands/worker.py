"""manage.py worker ingest|query|all — a Celery worker for one pool of this deployment's queues.

Two pools, so a query never waits behind an ingestion: `ingest` consumes the default queue
(CELERY_TASK_DEFAULT_QUEUE: ingestion turns, upkeep) with CELERY_WORKER_CONCURRENCY processes;
`query` consumes the query jobs' queue (its name + ".query") with RAG_QUERY_WORKER_CONCURRENCY.
Two worker processes rather than one worker with both queues: Celery cannot reserve pool
processes for a queue, so in one worker every process could be busy indexing while a query waits.
`all` is one worker for both queues (small setups, or the old single-worker layout).
"""

import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand

POOLS = ("ingest", "query", "all")


def worker_command(pool: str, *, loglevel: str = "INFO") -> list[str]:
    """The `celery worker` command line of a worker of `pool` (see the module docstring)."""
    from ragsite.celery import worker_queues

    concurrency = (
        settings.RAG_QUERY_WORKER_CONCURRENCY if pool == "query" else settings.CELERY_WORKER_CONCURRENCY
    )
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "ragsite",
        "worker",
        f"--queues={','.join(worker_queues(pool))}",
        f"--concurrency={concurrency}",
        f"--loglevel={loglevel}",
        # Workers on one host need distinct names (the default is celery@<host> for all of them):
        # the pool and this process's pid (`serve`'s, or the worker's own once `worker` execs it).
        f"--hostname={pool}-{os.getpid()}@%h",
    ]


class Command(BaseCommand):
    help = "Run a Celery worker for the ingestion pool, the query-job pool, or both."

    def add_arguments(self, parser):
        parser.add_argument("pool", choices=POOLS)
        parser.add_argument("--loglevel", default="INFO")

    def handle(self, *args, pool, loglevel, **options):
        command = worker_command(pool, loglevel=loglevel)
        # The worker replaces this process, so signals (docker stop, Ctrl-C) reach it directly.
        os.execv(command[0], command)  # noqa: S606  (a fixed argv, no shell)
