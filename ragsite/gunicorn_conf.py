"""gunicorn settings for production (`gunicorn -c python:ragsite.gunicorn_conf ragsite.wsgi`).

gthread workers keep connections alive between requests. With PROMETHEUS_MULTIPROC_DIR set, every
worker (and every Celery worker sharing the directory) writes its metrics there and /metrics (and
each tenant's admin/metrics) add them up (ragsite/multiprocess_metrics.py): at start the files of
an earlier run are removed, and a dead worker's live gauges are dropped.
"""

import os

from ragsite import multiprocess_metrics

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = 120
keepalive = 5


def on_starting(server):
    # Not the whole directory: Celery workers sharing it are still counting.
    multiprocess_metrics.remove_dead_files()


def post_worker_init(worker):
    from ragsite.heap import freeze_long_lived

    freeze_long_lived()  # Django's import-time objects; the models are frozen when they load


def child_exit(server, worker):
    multiprocess_metrics.mark_dead(worker.pid)
