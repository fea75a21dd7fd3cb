"""Lexrag project package: settings, URLs, Celery, database bootstrap, errors, logging."""

from . import multiprocess_metrics

# First, before any Prometheus metric exists: where this process's counts go (PROMETHEUS_MULTIPROC_DIR).
multiprocess_metrics.install()

from .celery import app as celery_app  # noqa: E402

__all__ = ["celery_app"]
