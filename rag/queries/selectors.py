"""Reads of query jobs and query history. A caller sees its own jobs and questions; a tenant
admin sees every job of the tenant. Anything else (another caller's, another tenant's, missing)
is the same `NotFound`."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from ragsite.exceptions import NotFound
from tenants.selectors import owned_list

from ..models import AuditLog, QueryJob
from ..selectors import audit_search
from .caller import Caller
from .withheld import checked_row, checked_rows


def query_job_get(*, tenant, job_id: str, caller: Caller) -> QueryJob:
    job = owned_list(QueryJob, tenant=tenant).filter(job_id=str(job_id)).first()
    if job is None or not (caller.is_admin or caller.owns(job)):
        raise NotFound("Query job not found.")
    return job


def query_job_find_idempotent(*, tenant, idempotency_key: str) -> QueryJob | None:
    """The tenant's job submitted under `idempotency_key` (which already names its caller)."""
    return owned_list(QueryJob, tenant=tenant).filter(idempotency_key=idempotency_key).first()


def query_history_list(
    *,
    tenant,
    caller: Caller,
    status: str | None = None,
    conversation_id: str | None = None,
    text: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditLog]:
    """The caller's own questions, newest first (a user's, or an API key's): the tenant's audit
    rows (`audit_search`) of this caller, with their options (to ask again) but not the response.
    Questions asked on their behalf (a review table's cells: `origin` in the row's flags) are
    audited but are not theirs to list."""
    rows = audit_search(
        tenant=tenant,
        status=status,
        conversation_id=conversation_id,
        since=since,
        until=until,
        hidden_cases=caller.hidden_cases,
    ).filter(user_id=caller.user_id, api_key_prefix=caller.api_key_prefix)
    rows = rows.exclude(flags__has_key="origin")  # asked on their behalf (a review table's cells)
    if text:
        rows = rows.filter(query__icontains=text)
    return rows.defer(None).defer("result")


def query_history_get(*, tenant, caller: Caller, request_id: str) -> AuditLog:
    """The caller's latest question with this request id (ids can repeat when a client reuses its
    X-Request-ID)."""
    rows = query_history_list(tenant=tenant, caller=caller).filter(request_id=str(request_id))
    row = rows.defer(None).first()  # with the response
    if row is None:
        raise NotFound("Query not found.")
    return checked_row(caller, row)  # access is decided now, not when it was answered


THREAD_TURNS = 20


def answer_get(*, tenant, caller: Caller, request_id: str) -> AuditLog:
    """A stored answer the caller may open at /ask/<request_id>: their own, or, for the firm's
    admins, anyone's in the firm (as the audit log shows them). Dry runs are not answers."""
    if "\x00" in str(request_id):  # in no request id, and refused by PostgreSQL in a lookup
        raise NotFound("Query not found.")
    rows = audit_search(tenant=tenant, request_id=str(request_id)).exclude(status="dry_run")
    if not caller.is_admin:
        rows = rows.filter(user_id=caller.user_id, api_key_prefix=caller.api_key_prefix)
    row = rows.defer(None).first()
    if row is None:
        raise NotFound("Query not found.")
    return checked_row(caller, row)  # access is decided now, not when it was answered


def answer_thread(*, tenant, caller: Caller, row: AuditLog) -> list[AuditLog]:
    """The conversation `row` belongs to, up to and including it (oldest first, at most
    THREAD_TURNS): the same asker's earlier turns with the same conversation id, as `caller` may
    read them now (rag.queries.withheld)."""
    if not row.conversation_id:
        return checked_rows(caller, [row])
    rows = (
        audit_search(tenant=tenant, conversation_id=row.conversation_id)
        .filter(user_id=row.user_id, api_key_prefix=row.api_key_prefix, created_at__lte=row.created_at)
        .exclude(status="dry_run")
        .exclude(pk=row.pk)
        .defer(None)
        .order_by("-created_at", "-pk")[: THREAD_TURNS - 1]
    )
    return checked_rows(caller, [*reversed(list(rows)), row])
