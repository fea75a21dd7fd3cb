"""Lexrag project package: settings, URLs, Celery, database bootstrap, errors, logging."""

from .celery import app as celery_app

__all__ = ["celery_app"]
