"""Search's scans on a read replica, when one is configured and fresh enough (DATABASE_REPLICA_URLS).

The vector and keyword scans are most of a question's database time; on a replica they leave the
primary to ingestion and everything else. Three rules keep the answers what the primary would give:

1. **Fresh for the tenant.** Every change to a tenant's corpus or to who may read it bumps its
   `IndexVersion` row in the same transaction (documents indexed or removed, sensitivity, readers,
   edits). A replica is used for a tenant only when its copy of that row has caught up with the
   primary's (GitLab's database load balancing sticks to the primary by WAL position the same way;
   the version row says it per tenant). A replica behind on one firm still serves the others.
2. **Checked on the primary.** What a replica returns is only a list of candidate passages. Before
   anything of them is read, the list is filtered again on the primary with the same tenant, scope
   and visibility conditions, so a passage made confidential, walled off or deleted after the
   version check (a replica may replay it later still) is dropped, never shown.
3. **Never worse than the primary.** A replica that fails (down, timed out, a query cancelled by
   recovery) is left alone for DATABASE_REPLICA_RETRY_SECONDS and the search runs on the primary.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections

from rag import selectors
from rag.models import Chunk
from ragsite.db_routers import reading_from
from ragsite.exceptions import VectorStoreUnavailable
from tenants.models import Tenant
from tenants.selectors import owned_list

from .filters import SearchFilters
from .hits import Hit

logger = logging.getLogger(__name__)

# What a failing replica raises (not a query's bug, which would fail on the primary too).
_REPLICA_FAILURES = (VectorStoreUnavailable, OperationalError, InterfaceError)

_turns = itertools.count()
_failed_until: dict[str, float] = {}
_failed_lock = threading.Lock()


def replica_aliases() -> list[str]:
    """The configured replicas' database aliases, in order (none without DATABASE_REPLICA_URLS)."""
    return [alias for alias in settings.DATABASES if alias.startswith("replica_")]


def searched_on_replica(
    search: Callable[[SearchFilters | None], list[Hit]],
    scopes: list[SearchFilters | None],
    *,
    tenant: Tenant,
    index_version: int,
) -> tuple[list[list[Hit]], str]:
    """`search(scope)` of each scope, on a replica that is fresh for `tenant` (checked once for
    all of them) with each scope's hits confirmed on the primary; else on the primary. Returns
    the hits of each scope and the alias that was searched."""
    alias = _fresh_replica(tenant, index_version)
    if alias is not None:
        try:
            with reading_from(alias):
                found = [search(scope) for scope in scopes]
        except _REPLICA_FAILURES as exc:
            _set_aside(alias, exc)
        else:
            confirmed = [
                confirmed_on_primary(hits, tenant=tenant, filters=scope)
                for hits, scope in zip(found, scopes, strict=True)
            ]
            return confirmed, alias
    return [search(scope) for scope in scopes], DEFAULT_DB_ALIAS


def confirmed_on_primary(hits: list[Hit], *, tenant: Tenant, filters: SearchFilters | None) -> list[Hit]:
    """The hits whose passages the primary still has for `tenant` and still lets through
    `filters` (scope and visibility), in their order: one indexed lookup of the ids."""
    if not hits:
        return hits
    chunks = owned_list(Chunk, tenant=tenant).filter(pk__in=[hit.chunk_id for hit in hits])
    if filters is not None:
        chunks = chunks.filter(filters.as_q())
    kept = set(chunks.using(DEFAULT_DB_ALIAS).values_list("pk", flat=True))
    return [hit for hit in hits if hit.chunk_id in kept]


def _fresh_replica(tenant: Tenant, index_version: int) -> str | None:
    """The next replica in turn (of those not set aside) whose copy of the tenant's corpus version
    is at least `index_version`, or None."""
    aliases = [alias for alias in replica_aliases() if not _set_aside_now(alias)]
    if not aliases:
        return None
    start = next(_turns)
    for offset in range(len(aliases)):
        alias = aliases[(start + offset) % len(aliases)]
        try:
            version = _replica_version(alias, tenant)
        except _REPLICA_FAILURES as exc:
            _set_aside(alias, exc)
            continue
        if version >= index_version:
            return alias
        logger.debug("replica %s is behind for tenant %s (%s < %s)", alias, tenant.pk, version, index_version)
    return None


def _replica_version(alias: str, tenant: Tenant) -> int:
    with reading_from(alias):
        return selectors.index_version_get(tenant=tenant)


def _set_aside_now(alias: str) -> bool:
    with _failed_lock:
        return _failed_until.get(alias, 0.0) > time.monotonic()


def _set_aside(alias: str, exc: BaseException) -> None:
    logger.warning(
        "search replica %s failed; searching on the primary for %.0f s",
        alias,
        settings.DATABASE_REPLICA_RETRY_SECONDS,
        extra={"error": f"{type(exc).__name__}: {exc}"},
    )
    with _failed_lock:
        _failed_until[alias] = time.monotonic() + settings.DATABASE_REPLICA_RETRY_SECONDS
    connections[alias].close()


def forget_failures() -> None:
    """Use every replica again at once (tests; a process never needs it)."""
    with _failed_lock:
        _failed_until.clear()
