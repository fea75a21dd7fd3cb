"""The fair ingestion queue (#20): one tenant's 500 files do not hold another tenant's one file.

Documents wait in the database as `queued`. The broker carries *turns* (`rag.ingest_next`, no
arguments), one per queued document; a worker that runs a turn takes the next document fairly
(`document_claim_next`): from the tenant with the fewest documents processing, and among those the
one whose turn came longest ago (`Tenant.ingest_turn_at`); within a tenant, in the order queued. So
with one worker, tenant B's single upload starts after at most the one document of tenant A that
is already running, not after A's whole batch, whatever order the turns arrive in.

Robust to lost workers as before (`recovery`): a claimed document is `processing` and carries the
heartbeat; the sweep sets a lost one back to `queued` and sends a turn. A turn redelivered after
its pool process died resumes the document it had taken (`document_of_turn`), as the
document-carrying task did. Turns lost with the broker
are made up by the sweep too (`turns_top_up`); a turn that finds nothing queued does nothing.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from tenants.models import Tenant

from ..models import Document, DocumentStatus

logger = logging.getLogger(__name__)

# pg_advisory_xact_lock key of the claim: one claim at a time across workers (two small queries),
# so two workers never both pick "the tenant with the fewest running".
_CLAIM_LOCK = 0x1E7_20_05


def _next_tenant() -> Tenant | None:
    """The tenant whose turn it is: has queued documents, fewest processing, longest since its turn."""
    processing = (
        Document.objects.filter(tenant=OuterRef("pk"), status=DocumentStatus.PROCESSING)
        .values("tenant")
        .annotate(n=Count("pk"))
        .values("n")
    )
    waiting = Document.objects.filter(status=DocumentStatus.QUEUED).values("tenant")
    return (
        Tenant.objects.filter(pk__in=waiting)
        .annotate(processing=Coalesce(Subquery(processing, output_field=IntegerField()), Value(0)))
        .order_by("processing", F("ingest_turn_at").asc(nulls_first=True), "pk")
        .first()
    )


# Which document a turn (its Celery task id) took, for a redelivery of that turn; in the default cache.
_TURN_KEY = "ingest-turn:{}"
_TURN_TTL = 86400


def document_of_turn(turn_id: str | None) -> Document | None:
    """The document this turn took on an earlier delivery, if it is still `processing` (its pool
    process died mid-run); else None."""
    if not turn_id:
        return None
    try:
        document_id = cache.get(_TURN_KEY.format(turn_id))
    except Exception:  # no cache: the sweep recovers the document instead
        return None
    if document_id is None:
        return None
    return Document.objects.filter(pk=document_id, status=DocumentStatus.PROCESSING).first()


def _turn_remember(turn_id: str | None, document_id: int) -> None:
    if turn_id:
        with suppress(Exception):  # only a shortcut: the sweep recovers without it
            cache.set(_TURN_KEY.format(turn_id), document_id, timeout=_TURN_TTL)


def document_claim_next(*, turn_id: str | None = None) -> Document | None:
    """Take the next document fairly (see the module docstring) and mark it `processing`; None when
    nothing is queued. The caller ingests it; `turn_id` (the turn's task id) is remembered for a
    redelivery."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_CLAIM_LOCK])
        tenant = _next_tenant()
        if tenant is None:
            return None
        document = (
            Document.objects.for_tenant(tenant)
            .filter(status=DocumentStatus.QUEUED)
            .order_by("updated_at", "pk")
            .first()
        )
        now = timezone.now()
        Document.objects.filter(pk=document.pk).update(
            status=DocumentStatus.PROCESSING, stage="starting", updated_at=now
        )
        Tenant.objects.filter(pk=tenant.pk).update(ingest_turn_at=now)
    _turn_remember(turn_id, document.pk)
    document.refresh_from_db()
    return document


def turn_send() -> None:
    """Give the queue one more turn (call once per document queued, on commit)."""
    from rag.tasks import ingest_next

    ingest_next.delay()


def _broker_backlog() -> int | None:
    """Messages waiting in the default queue on the Redis broker, or None if it cannot be read."""
    from ragsite.celery import app

    try:
        with app.connection_for_read() as conn:
            return int(conn.default_channel.client.llen(app.conf.task_default_queue))
    except Exception:  # another broker, or down: the next sweep tries again
        return None


def turns_top_up() -> int:
    """Send turns for documents that have waited longer than RAG_INGEST_STALL_SECONDS when the
    broker holds fewer messages than documents wait (turns lost with a flushed or failed broker).
    Extra turns are harmless; returns how many were sent."""
    stale = timezone.now() - timedelta(seconds=settings.RAG_INGEST_STALL_SECONDS)
    queued = Document.objects.filter(status=DocumentStatus.QUEUED)
    if not queued.filter(updated_at__lt=stale).exists():
        return 0
    backlog = _broker_backlog()
    if backlog is None:
        return 0
    missing = queued.count() - backlog
    for _ in range(max(missing, 0)):
        turn_send()
    if missing > 0:
        logger.warning("ingestion turns topped up", extra={"turns": missing})
    return max(missing, 0)
