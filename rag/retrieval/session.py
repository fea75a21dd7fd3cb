"""One place that runs search SQL: per-query settings, a statement timeout and error mapping."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.db import InterfaceError, InternalError, OperationalError, connection, transaction

from ragsite.db_routers import current_read_alias, read_connection
from ragsite.exceptions import InvalidQuery, VectorStoreUnavailable
from ragsite.postgresql.retry import is_connection_failure, retry_delays

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

# pgvector's valid range for hnsw.ef_search.
MAX_EF_SEARCH = 1000


def default_ef_search() -> int:
    """settings.VECTOR_STORE_EF_SEARCH (pgvector's own default is 40)."""
    return positive_int(settings.VECTOR_STORE_EF_SEARCH, "VECTOR_STORE_EF_SEARCH", maximum=MAX_EF_SEARCH)


def statement_timeout_ms() -> int:
    """settings.VECTOR_STORE_TIMEOUT_SECONDS in whole milliseconds (0 disables the timeout)."""
    seconds = float(settings.VECTOR_STORE_TIMEOUT_SECONDS)
    return 0 if seconds <= 0 else max(1, round(seconds * 1000))


def holds_at_most(queryset, rows: int) -> bool:
    """Whether `queryset` has at most `rows` rows, counting no further than one more."""
    return queryset.order_by()[: rows + 1].count() <= rows


def positive_int(value, name: str, *, maximum: int | None = None) -> int:
    """`value` if it is an int in 1..maximum, else `InvalidQuery` naming the field."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidQuery(
            f"{name} must be a positive integer.", details={name: "Must be a positive integer."}
        )
    if maximum is not None and value > maximum:
        raise InvalidQuery(
            f"{name} must be at most {maximum}.", details={name: f"Must be at most {maximum}."}
        )
    return value


@contextmanager
def search_session(*, ef_search: int | None = None) -> Iterator[None]:
    """Run the block's queries in a transaction with transaction-local search settings.

    `SET LOCAL` (here `set_config(..., true)`, one round trip) needs a transaction, and must not
    outlive the search: the block is always rolled back (searches only read), so inside a caller's
    transaction the savepoint rollback undoes the settings too. With `ef_search`, the HNSW scan
    gets that candidate list size and pgvector 0.8's relaxed iterative scan, which keeps scanning
    the index until enough rows pass the WHERE clause (tenant, filters) instead of returning fewer.

    Timeouts and lost connections become `VectorStoreUnavailable` (503); SQL bugs stay errors.
    """
    names = ["statement_timeout"]
    values = [str(statement_timeout_ms())]
    if ef_search is not None:
        # max_scan_tuples: dead index entries (deleted or rolled-back chunks) count against pgvector's
        # 20k default, and a selective filter behind many of them would otherwise return nothing.
        names += ["hnsw.ef_search", "hnsw.iterative_scan", "hnsw.max_scan_tuples"]
        values += [str(ef_search), "relaxed_order", "200000"]
    set_sql = "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in names)
    params = [item for pair in zip(names, values, strict=True) for item in pair]
    try:
        alias = current_read_alias()  # a replica's, inside reading_from
        with transaction.atomic(using=alias):
            with read_connection().cursor() as cursor:
                cursor.execute(set_sql, params)
            yield
            transaction.set_rollback(True, using=alias)
    except (OperationalError, InterfaceError, InternalError) as exc:
        logger.warning("search query failed", extra={"error": f"{type(exc).__name__}: {exc}"})
        raise VectorStoreUnavailable() from exc


def retrying_lost_connection(search: Callable[P, R]) -> Callable[P, R]:
    """`search` run again on a fresh connection when its connection was lost, after each of
    `retry_delays()` (0.1, 0.2, 0.4 s by default); then `VectorStoreUnavailable` (503).

    For read-only work only. Never inside a caller's transaction: a new connection could not
    continue it, and what it wrote would be gone. Query errors are never retried."""

    @functools.wraps(search)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        delays = [] if connection.in_atomic_block else retry_delays()
        for delay in [*delays, None]:
            try:
                return search(*args, **kwargs)
            except (VectorStoreUnavailable, OperationalError, InterfaceError) as exc:
                if not is_connection_failure(exc):
                    raise
                if delay is None:
                    if isinstance(exc, VectorStoreUnavailable):
                        raise
                    raise VectorStoreUnavailable() from exc
                logger.warning("search lost its database connection; retrying in %.2f s", delay)
                time.sleep(delay)
                connection.close()  # the next query connects anew (and retries connecting)
        raise AssertionError("unreachable")  # pragma: no cover

    return run
