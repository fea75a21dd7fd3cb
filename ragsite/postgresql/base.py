"""The DatabaseWrapper of ENGINE "ragsite.postgresql": connecting is retried with backoff."""

from __future__ import annotations

import logging
import time

import psycopg
from django.db.backends.postgresql import base as postgresql_base

from .retry import is_connection_failure, retry_delays

logger = logging.getLogger(__name__)


class DatabaseWrapper(postgresql_base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        """A new connection; a connection-level failure is retried after each of `retry_delays()`.

        Safe to repeat: nothing has been sent on a connection that was never made. Other
        failures (a wrong password, a missing database) are raised at once."""
        for delay in [*retry_delays(), None]:
            try:
                return super().get_new_connection(conn_params)
            except psycopg.OperationalError as exc:
                if delay is None or not is_connection_failure(exc):
                    raise
                logger.warning("database connection failed (%s); retrying in %.2f s", exc, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover
