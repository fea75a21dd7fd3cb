"""PostgreSQL backend that starts the embedded server on a process's first connection.

Selected by settings when `DATABASE_URL` is unset (ENGINE "ragsite.embedded_pg"). Otherwise it is
ragsite.postgresql (Django's PostgreSQL backend, connecting with retries): queries, transactions
and pgvector behave identically. The server
is started at most once per process; if it is stopped later, connections fail loudly (health turns
`unhealthy`, APIs return 503) instead of silently restarting a server an operator stopped.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import psycopg
from psycopg import sql

from ragsite.postgresql import base as postgresql_base

from . import server

_started: set[Path] = set()
_lock = threading.Lock()


def _ensure_started_once(data_dir: Path) -> None:
    with _lock:
        if data_dir in _started:
            return
        server.ensure_running(data_dir)
        _started.add(data_dir)


def _create_database(socket_dir: Path, name: str) -> None:
    connect = psycopg.connect(host=str(socket_dir), user=server.SUPERUSER, dbname="postgres", autocommit=True)
    # DuplicateDatabase: another process created it first.
    with connect as conn, contextlib.suppress(psycopg.errors.DuplicateDatabase):
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


class DatabaseWrapper(postgresql_base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        data_dir = Path(self.settings_dict["DATA_DIR"]).resolve()
        _ensure_started_once(data_dir)
        try:
            return super().get_new_connection(conn_params)
        except psycopg.OperationalError as exc:
            dbname = conn_params.get("dbname")
            if not dbname or f'database "{dbname}" does not exist' not in str(exc):
                raise
            _create_database(server.socket_dir_for(data_dir), dbname)
            return super().get_new_connection(conn_params)
