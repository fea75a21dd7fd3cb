"""What a connection-level database failure is, and how long to wait before each retry.

Only failures that leave nothing half-done are retried: a connection that could not be made
(refused, dropped before it was ready, timed out, server starting or shutting down) or one that
was lost. A query error (bad SQL, a statement timeout, a constraint) is never one: running it
again would fail again or do the work twice.
"""

from __future__ import annotations

import psycopg
from django.conf import settings
from django.db import InterfaceError

# SQLSTATEs that mean "the connection, not the query": class 08 (connection exception) and the
# server refusing work while it shuts down, crashed or is still starting up.
_CONNECTION_STATES = frozenset({"57P01", "57P02", "57P03"})


def retry_delays() -> list[float]:
    """Seconds to wait before each retry: VECTOR_STORE_RETRY_BACKOFF_SECONDS doubled each time,
    VECTOR_STORE_RETRIES of them (0.1, 0.2, 0.4 by default)."""
    first = float(settings.VECTOR_STORE_RETRY_BACKOFF_SECONDS)
    return [first * 2**attempt for attempt in range(int(settings.VECTOR_STORE_RETRIES))]


def is_connection_failure(exc: BaseException) -> bool:
    """Whether `exc` (a Django or psycopg error, or one raised from it) means the connection
    failed or was lost, rather than a query failing on a working connection."""
    for error in _chain(exc):
        if isinstance(error, psycopg.InterfaceError):  # the connection is closed
            return True
        if isinstance(error, psycopg.OperationalError):
            state = error.sqlstate
            if state is None:  # psycopg gives connect failures no SQLSTATE: read the server's word
                return not _login_refused(str(error))
            return state.startswith("08") or state in _CONNECTION_STATES
        if isinstance(error, psycopg.Error):
            return False
    return any(isinstance(error, InterfaceError) for error in _chain(exc))


def _login_refused(message: str) -> bool:
    """Whether a failed connect is the server refusing this login (a wrong password or role, a
    missing database: FATAL), rather than not answering or not being ready ("FATAL:  the
    database system is starting up / shutting down", which is worth waiting for)."""
    return "FATAL:" in message and "the database system is" not in message


def _chain(exc: BaseException):
    """`exc` and the errors it was raised from, outermost first."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__
