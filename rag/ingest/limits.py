"""Fair-use limits of a tenant (#20): documents and bytes stored, ingestion jobs waiting, passages
per document. Each is a setting, overridable per tenant (`Tenant.limit`); 0 means unlimited.

Over a limit the request is refused as a whole, before anything is stored: 413 `QuotaExceeded` for
documents or bytes, 429 `TooManyIngestJobs` for jobs; a document making too many passages fails
with `DocumentTooLarge` before it is embedded. Messages name the limit and the current use.
"""

from __future__ import annotations

from django.db.models import Sum

from ragsite.exceptions import DocumentTooLarge, QuotaExceeded, TooManyIngestJobs
from tenants.models import Tenant

from ..models import Document, DocumentStatus

PENDING = (DocumentStatus.QUEUED, DocumentStatus.PROCESSING)


def _mb(size: int) -> str:
    return f"{size / 1048576:,.1f} MB"


def storage_check(*, tenant: Tenant, new_documents: int, new_bytes: int) -> None:
    """Refuse (413 QuotaExceeded) an upload that would take the tenant past its documents or
    bytes limit. Every file counts, even one that turns out to be a duplicate (an upper bound)."""
    documents = Document.objects.for_tenant(tenant)
    limit = tenant.limit("max_documents")
    if limit:
        used = documents.count()
        if used + new_documents > limit:
            raise QuotaExceeded(
                f"This tenant has {used:,} documents; {new_documents:,} more would pass its limit of "
                f"{limit:,} documents. Delete documents or ask for a larger quota.",
                details={"limit": "max_documents", "allowed": limit, "used": used, "adding": new_documents},
            )
    limit = tenant.limit("max_bytes")
    if limit:
        used = documents.aggregate(total=Sum("size_bytes"))["total"] or 0
        if used + new_bytes > limit:
            raise QuotaExceeded(
                f"This tenant stores {_mb(used)}; {_mb(new_bytes)} more would pass its limit of "
                f"{_mb(limit)}. Delete documents or ask for a larger quota.",
                details={"limit": "max_bytes", "allowed": limit, "used": used, "adding": new_bytes},
            )


def ingest_jobs_check(*, tenant: Tenant, new_jobs: int) -> None:
    """Refuse (429 TooManyIngestJobs) queueing `new_jobs` more documents when the tenant's queued
    and processing documents would pass its concurrent ingestion limit."""
    limit = tenant.limit("max_concurrent_ingests")
    if not limit or new_jobs <= 0:
        return
    used = Document.objects.for_tenant(tenant).filter(status__in=PENDING).count()
    if used + new_jobs > limit:
        raise TooManyIngestJobs(
            f"This tenant has {used:,} documents queued or being indexed; {new_jobs:,} more would pass "
            f"its limit of {limit:,} concurrent ingestion jobs. Try again when some are done.",
            details={"limit": "max_concurrent_ingests", "allowed": limit, "used": used, "adding": new_jobs},
        )


def passages_check(*, tenant: Tenant, passages: int) -> None:
    """Raise DocumentTooLarge when one document makes more passages than the tenant's limit
    (chunking stops at one past it, so `passages` may be no more than that)."""
    limit = tenant.limit("max_passages_per_document")
    if limit and passages > limit:
        raise DocumentTooLarge(
            f"The document makes more than {limit:,} passages; the limit is {limit:,} passages per "
            "document (RAG_MAX_PASSAGES_PER_DOCUMENT). Split it into smaller files.",
            details={"limit": "max_passages_per_document", "allowed": limit},
        )
