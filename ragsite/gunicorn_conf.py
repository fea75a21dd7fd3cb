"""gunicorn settings for production (`gunicorn -c python:ragsite.gunicorn_conf ragsite.wsgi`).

gthread workers keep connections alive between requests. With PROMETHEUS_MULTIPROC_DIR set, every
worker writes its metrics there and /metrics (and each tenant's admin/metrics) add them up; the
directory is emptied at start and a dead worker's live gauges are dropped.
"""

import os
import shutil
from pathlib import Path

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = 120
keepalive = 5


def on_starting(server):
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        shutil.rmtree(directory, ignore_errors=True)  # counts of an earlier run must not add up
        Path(directory).mkdir(parents=True, exist_ok=True)


def post_worker_init(worker):
    from ragsite.heap import freeze_long_lived

    freeze_long_lived()  # Django's import-time objects; the models are frozen when they load


def child_exit(server, worker):
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
