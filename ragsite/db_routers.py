"""Database routing: every read and write goes to the primary ("default"), except the reads a
block inside `reading_from(alias)` makes (search's scans on a read replica, rag/retrieval/replica.py).

Routing by an explicit block rather than by model keeps read-your-writes everywhere else: a
document a user just uploaded, a setting an admin just saved, are read back from the primary.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import DEFAULT_DB_ALIAS, connections

_reading_from: ContextVar[str] = ContextVar("lexrag_reading_from", default=DEFAULT_DB_ALIAS)


def current_read_alias() -> str:
    """The database alias reads go to now ("default" outside `reading_from`)."""
    return _reading_from.get()


def read_connection():
    """The connection reads go to now: raw SQL of search uses it as the ORM's reads do."""
    return connections[current_read_alias()]


@contextmanager
def reading_from(alias: str) -> Iterator[None]:
    """Route the block's ORM reads and `read_connection()` to `alias`. Writes stay on the primary."""
    token = _reading_from.set(alias)
    try:
        yield
    finally:
        _reading_from.reset(token)


class SearchReplicaRouter:
    """Reads to `current_read_alias()`; writes and migrations to the primary only."""

    def db_for_read(self, model, **hints):
        return current_read_alias()

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True  # every alias holds the same database

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == DEFAULT_DB_ALIAS
