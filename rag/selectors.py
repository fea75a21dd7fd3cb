"""Reads of research data. `tenant` is always the first required keyword; another tenant's object
is the same `NotFound` as a missing one (tenants.selectors.owned_get)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count, Prefetch, Q, QuerySet

from ragsite.exceptions import NotFound
from templates_admin.models import PromptTemplate
from tenants.models import Tenant
from tenants.selectors import owned_get, owned_list

from .models import (
    AuditLog,
    Case,
    Chunk,
    Document,
    DocumentStatus,
    IndexVersion,
    RankingWeights,
    Sensitivity,
)
from .retrieval.filters import SearchFilters, Visibility
from .retrieval.ranking import Weights


def case_list(*, tenant: Tenant, hidden_cases: Collection[int] = ()) -> QuerySet[Case]:
    """The tenant's cases but `hidden_cases` (those walled off from the reader, `walled_case_ids`)."""
    cases = owned_list(Case, tenant=tenant)
    return cases.exclude(pk__in=sorted(hidden_cases)) if hidden_cases else cases


def case_search(*, tenant: Tenant, q: str = "", hidden_cases: Collection[int] = ()) -> QuerySet[Case]:
    """The tenant's cases by name, each with `document_count`; `q` keeps those whose name or
    client contains it (any case); `hidden_cases` are left out."""
    cases = case_list(tenant=tenant, hidden_cases=hidden_cases)
    if q:
        cases = cases.filter(Q(name__icontains=q) | Q(client__icontains=q))
    return cases.annotate(document_count=Count("documents")).order_by("name", "pk")


def case_get(*, tenant: Tenant, case_id, hidden_cases: Collection[int] = ()) -> Case:
    """One case; `NotFound` when missing, another tenant's or one of `hidden_cases` (the same)."""
    if _is_hidden(case_id, hidden_cases):
        raise NotFound("Case not found.")
    return owned_get(Case, tenant=tenant, pk=case_id)


def _is_hidden(pk, hidden: Collection[int]) -> bool:
    try:
        return int(pk) in set(hidden)
    except (TypeError, ValueError):
        return False


def case_get_for_update(*, tenant: Tenant, case_id) -> Case:
    """`case_get` with the row locked until the surrounding transaction ends."""
    try:
        return case_list(tenant=tenant).select_for_update().get(pk=case_id)
    except (Case.DoesNotExist, ValueError, TypeError) as exc:
        raise NotFound("Case not found.") from exc


def case_get_with_document_count(*, tenant: Tenant, case_id, hidden_cases: Collection[int] = ()) -> Case:
    """`case_get`, with `document_count` set."""
    case = case_get(tenant=tenant, case_id=case_id, hidden_cases=hidden_cases)
    case.document_count = document_list(tenant=tenant, case_id=case.pk).count()
    return case


def walled_case_ids(*, tenant: Tenant, user_id: int | None) -> frozenset[int]:
    """The tenant's cases behind an ethical wall `user_id` is not a member of (all walled cases
    for an API key, `user_id` None: a wall names people). Admins are walled off too: walls are
    about conflicts, not rank (they manage walls in the firm console, `rag.services.case_wall_set`)."""
    walled = owned_list(Case, tenant=tenant).filter(walled=True)
    if user_id is not None:
        walled = walled.exclude(wall_members__pk=user_id)
    return frozenset(walled.values_list("pk", flat=True))


def case_find_by_name(*, tenant: Tenant, name: str) -> Case | None:
    """The case everyone in the tenant sees under `name` (walled cases are not looked at: their
    names must not be found out by trying them)."""
    return case_list(tenant=tenant).filter(name=name, walled=False).first()


def attachments_prefetch(tenant: Tenant) -> Prefetch:
    """For `prefetch_related` on a list of documents: their attachments (ids only), the tenant's
    own, in upload order; `document_attachment_ids` reads them."""
    attachments = owned_list(Document, tenant=tenant).only("pk", "parent_id").order_by("pk")
    return Prefetch("attachments", queryset=attachments)


def document_attachments(*, tenant: Tenant, document_id) -> QuerySet[Document]:
    """The tenant's documents that came attached to the e-mail `document_id`, in upload order,
    without their text."""
    return owned_list(Document, tenant=tenant).filter(parent_id=document_id).defer("text").order_by("pk")


def document_attachment_ids(*, tenant: Tenant, document_id) -> list[int]:
    """Ids of `document_attachments`."""
    return list(document_attachments(tenant=tenant, document_id=document_id).values_list("pk", flat=True))


def document_list(
    *,
    tenant: Tenant,
    case_id=None,
    status: str | None = None,
    doc_type: str | None = None,
    source_type: str | None = None,
    jurisdiction: str | None = None,
    sensitivity: str | None = None,
    q: str | None = None,
    uploaded_after: datetime | None = None,
    uploaded_before: datetime | None = None,
    ids: Collection[int] | None = None,
    hidden_cases: Collection[int] = (),
) -> QuerySet[Document]:
    """The tenant's documents, newest first, without their text; every filter given narrows them.

    `jurisdiction` compares case-insensitively (as search filters do); `q` keeps documents whose
    title or file name contains it; `uploaded_after`/`uploaded_before` bound `created_at`
    (inclusive/exclusive); `ids` keeps those documents only (a batch's progress, read at once);
    documents of `hidden_cases` (walled off from the reader) are left out.
    """
    documents = owned_list(Document, tenant=tenant).select_related("case", "uploaded_by").defer("text")
    if hidden_cases:
        documents = documents.exclude(case_id__in=sorted(hidden_cases))
    if case_id is not None:
        documents = documents.filter(case_id=case_id)
    if ids is not None:
        documents = documents.filter(pk__in=sorted(ids))
    exact = {
        "status": status,
        "doc_type": doc_type,
        "source_type": source_type,
        "sensitivity": sensitivity,
    }
    documents = documents.filter(**{field: value for field, value in exact.items() if value})
    if jurisdiction:
        documents = documents.filter(jurisdiction__iexact=jurisdiction)
    if q:
        documents = documents.filter(Q(title__icontains=q) | Q(original_filename__icontains=q))
    if uploaded_after is not None:
        documents = documents.filter(created_at__gte=uploaded_after)
    if uploaded_before is not None:
        documents = documents.filter(created_at__lt=uploaded_before)
    return documents.order_by("-created_at", "-pk")


def document_get(*, tenant: Tenant, document_id, hidden_cases: Collection[int] = ()) -> Document:
    """One document; `NotFound` when missing, another tenant's or in one of `hidden_cases`."""
    document = owned_get(Document, tenant=tenant, pk=document_id)
    if document.case_id in set(hidden_cases):
        raise NotFound("Document not found.")
    return document


def document_ids_named(*, tenant: Tenant, name: str, visibility: Visibility | None = None) -> QuerySet:
    """Ids of the tenant's documents whose file name or title is `name` (case-insensitive), of
    those `visibility` lets the reader see (a confidential document they may not read is named by
    its file name only)."""
    documents = owned_list(Document, tenant=tenant)
    named = Q(original_filename__iexact=name) | Q(title__iexact=name)
    if visibility is not None:
        documents = documents.exclude(case_id__in=sorted(visibility.walled_case_ids))
        if visibility.readable_confidential is not None:
            unreadable = Q(sensitivity=Sensitivity.CONFIDENTIAL) & ~Q(
                pk__in=sorted(visibility.readable_confidential)
            )
            named = Q(original_filename__iexact=name) | (Q(title__iexact=name) & ~unreadable)
    return documents.filter(named).values_list("pk", flat=True)


def filter_ids_unknown(
    *, tenant: Tenant, filters: SearchFilters, visibility: Visibility | None = None
) -> dict[str, list[int]]:
    """The `case_ids` and `document_ids` of `filters` the tenant does not have (missing or another
    tenant's: the same), or that `visibility` walls off from the reader (the same again), by
    filter name; {} when it has them all."""
    walled = sorted(visibility.walled_case_ids) if visibility is not None else []
    unknown = {}
    for name, model, wall in (("case_ids", Case, "pk__in"), ("document_ids", Document, "case_id__in")):
        ids = getattr(filters, name)
        if not ids:
            continue
        rows = owned_list(model, tenant=tenant).filter(pk__in=ids).exclude(**{wall: walled})
        owned = set(rows.values_list("pk", flat=True))
        missing = [pk for pk in dict.fromkeys(ids) if pk not in owned]
        if missing:
            unknown[name] = missing
    return unknown


def reader_visibility(*, tenant: Tenant, user_id: int | None, reads_all_confidential: bool) -> Visibility:
    """What a reader of `tenant` may see (rag.retrieval.filters.Visibility): the confidential
    documents they may read (None when they may read every one the firm has) and the cases walled
    off from them (every walled case they are not a member of; admins included, as walls are about
    conflicts, not rank)."""
    walled_ids = walled_case_ids(tenant=tenant, user_id=user_id)
    if reads_all_confidential:
        return Visibility(None, frozenset(), walled_ids)
    confidential = owned_list(Document, tenant=tenant).filter(sensitivity=Sensitivity.CONFIDENTIAL)
    readable = (
        frozenset(confidential.filter(confidential_readers__pk=user_id).values_list("pk", flat=True))
        if user_id is not None
        else frozenset()
    )
    withheld = frozenset(confidential.exclude(pk__in=readable).values_list("pk", flat=True))
    return Visibility(readable if withheld else None, withheld, walled_ids)


def withheld_within(*, tenant: Tenant, filters: SearchFilters) -> frozenset[int]:
    """The documents `filters.visibility` withholds that the filters would otherwise reach: the
    confidential documents of the request's scope its reader may not read (whatever was asked)."""
    visibility = filters.visibility
    if visibility is None or not visibility.withheld:
        return frozenset()
    unseen = dataclasses.replace(filters, visibility=None)
    chunks = owned_list(Chunk, tenant=tenant).filter(document_id__in=sorted(visibility.withheld))
    chunks = chunks.filter(unseen.as_q()).exclude(case_id__in=sorted(visibility.walled_case_ids))
    return frozenset(chunks.order_by().values_list("document_id", flat=True).distinct())


def document_ids_within(*, tenant: Tenant, filters: SearchFilters) -> QuerySet:
    """Ids of the tenant's documents that search under `filters` can reach (those with chunks the
    filters let through), as a subquery; with empty filters, every document with chunks. Filters
    holding only what a reader sees are read off the documents table (the same documents, without
    a scan of every passage: the visibility is a document's, copied onto its passages)."""
    if filters.visibility is not None and dataclasses.replace(filters, visibility=None).is_empty():
        return document_ids_visible(tenant=tenant, visibility=filters.visibility)
    chunks = owned_list(Chunk, tenant=tenant).filter(filters.as_q()).order_by()
    return chunks.values_list("document_id", flat=True).distinct()


def document_ids_visible(*, tenant: Tenant, visibility: Visibility) -> QuerySet:
    """Ids of the tenant's documents with passages that a reader who sees `visibility` may see."""
    documents = owned_list(Document, tenant=tenant).exclude(case_id__in=sorted(visibility.walled_case_ids))
    if visibility.readable_confidential is not None:
        documents = documents.exclude(
            Q(sensitivity=Sensitivity.CONFIDENTIAL) & ~Q(pk__in=sorted(visibility.readable_confidential))
        )
    return documents.filter(chunk_count__gt=0).order_by().values_list("pk", flat=True)


def document_parent_id(*, tenant: Tenant, document_id) -> int | None:
    """The id of the e-mail the tenant's document was attached to (None: none, or no such document)."""
    ids = owned_list(Document, tenant=tenant).filter(pk=document_id).values_list("parent_id", flat=True)
    return ids.first()


def document_find_duplicate(*, tenant: Tenant, case: Case, sha256: str) -> Document | None:
    return owned_list(Document, tenant=tenant).filter(case=case, sha256=sha256).first()


def document_list_stale(*, tenant: Tenant, embedding_model: str) -> QuerySet[Document]:
    """Ready documents whose chunks were embedded with another model than `embedding_model`."""
    return (
        owned_list(Document, tenant=tenant)
        .filter(status=DocumentStatus.READY)
        .exclude(embedding_model=embedding_model)
    )


def chunk_list(*, tenant: Tenant, document_id) -> QuerySet[Chunk]:
    return owned_list(Chunk, tenant=tenant).filter(document_id=document_id).order_by("index")


def chunk_embeddings_by_hash(*, tenant: Tenant, embedding_model: str, text_hashes: set[str]) -> dict:
    """{text_hash: embedding} for texts of this tenant already embedded with this model."""
    rows = (
        owned_list(Chunk, tenant=tenant)
        .filter(embedding_model=embedding_model, text_hash__in=text_hashes)
        .order_by()
        .distinct("text_hash")
        .values_list("text_hash", "embedding")
    )
    return dict(rows)


def index_version_get(*, tenant: Tenant) -> int:
    """The tenant's corpus version (0 before anything was indexed)."""
    row = owned_list(IndexVersion, tenant=tenant).values_list("version", flat=True).first()
    return row or 0


@dataclass(frozen=True)
class QuerySnapshot:
    """What every query's cache key needs: the tenant's corpus and weights versions, which prompt
    template (and which version of it) a template id resolves to for the tenant, and which of the
    tenant's confidential documents the reader may read."""

    index_version: int
    indexed_at: datetime | None
    weights_version: int
    template_pk: int | None  # None: no template of this id is visible to the tenant
    template_version: int | None
    # A digest of the ids of the confidential documents the reader may read, or "none".
    readable_confidential: str = "none"


def query_snapshot_get(
    *, tenant: Tenant, template_id: str, reads_all_confidential: bool = False, user_id: int | None = None
) -> QuerySnapshot:
    """The `QuerySnapshot` of `tenant` in one round trip (it is read on every query, cache hits
    included). The template is the tenant's own `template_id`, else the built-in one. The readable
    confidential documents are every one of the tenant's (`reads_all_confidential`: admins and
    owners) or those listing `user_id` as a reader (none without a user)."""
    if tenant is None or tenant.pk is None:
        raise ValueError("a saved tenant is required to scope a query")
    documents = Document._meta.db_table
    readers = Document.confidential_readers.through._meta.db_table
    sql = f"""
        SELECT iv.version, iv.updated_at, rw.version, t.id, t.version, c.readable
        FROM (SELECT %(tenant)s::bigint AS tenant_id) me
        LEFT JOIN {IndexVersion._meta.db_table} iv ON iv.tenant_id = me.tenant_id
        LEFT JOIN {RankingWeights._meta.db_table} rw ON rw.tenant_id = me.tenant_id
        LEFT JOIN LATERAL (
            SELECT id, version FROM {PromptTemplate._meta.db_table}
            WHERE template_id = %(template_id)s AND (tenant_id = me.tenant_id OR tenant_id IS NULL)
            ORDER BY tenant_id NULLS LAST LIMIT 1
        ) t ON true
        LEFT JOIN LATERAL (
            SELECT encode(sha256(string_agg(ids.id::text, ',' ORDER BY ids.id)::bytea), 'hex') AS readable
            FROM (
                SELECT d.id FROM {documents} d
                WHERE %(reads_all)s AND d.tenant_id = me.tenant_id AND d.sensitivity = %(confidential)s
                UNION
                SELECT d.id FROM {readers} r JOIN {documents} d ON d.id = r.document_id
                WHERE r.user_id = %(user)s AND d.tenant_id = me.tenant_id
                  AND d.sensitivity = %(confidential)s
            ) ids
        ) c ON true
    """  # noqa: S608 - table names from model metadata; values are parameters
    params = {
        "tenant": tenant.pk,
        "template_id": template_id,
        "confidential": Sensitivity.CONFIDENTIAL,
        "reads_all": reads_all_confidential,
        "user": user_id,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        index_version, indexed_at, weights_version, template_pk, template_version, readable = (
            cursor.fetchone()
        )
    return QuerySnapshot(
        index_version=index_version or 0,
        indexed_at=indexed_at,
        weights_version=weights_version or 0,
        template_pk=template_pk,
        template_version=template_version,
        readable_confidential=readable or "none",
    )


def ranking_weights_get(*, tenant: Tenant) -> Weights:
    """The weights the tenant ranks with: its `RankingWeights` row, else the RAG_*_WEIGHT settings."""
    row = (
        owned_list(RankingWeights, tenant=tenant)
        .values_list("similarity_weight", "recency_weight", "trust_weight")
        .first()
    )
    if row is None:
        return Weights.from_settings()
    similarity, recency, trust = row
    return Weights(similarity=similarity, recency=recency, trust=trust)


def ranking_weights_version(*, tenant: Tenant) -> int:
    """The version of the tenant's ranking weights, for cache keys (0 while it has no row)."""
    version = owned_list(RankingWeights, tenant=tenant).values_list("version", flat=True).first()
    return version or 0


def audit_list(*, tenant: Tenant) -> QuerySet[AuditLog]:
    return owned_list(AuditLog, tenant=tenant)


def conversation_questions(
    *, tenant: Tenant, conversation_id: str, user_id: int | None, api_key_prefix: str = "", limit: int = 3
) -> list[str]:
    """The last `limit` questions (oldest first) asked in the conversation by this caller (a user,
    or an API key: two keys of one tenant never share a conversation)."""
    rows = (
        audit_list(tenant=tenant)
        .filter(conversation_id=conversation_id, user_id=user_id, api_key_prefix=api_key_prefix)
        .exclude(status="failed")
        .order_by("-created_at", "-pk")
        .values_list("search_query", "query")[:limit]
    )
    return [searched or query for searched, query in reversed(rows)]


def conversation_cited_title(
    *,
    tenant: Tenant,
    conversation_id: str,
    user_id: int | None,
    api_key_prefix: str = "",
    hidden_cases: Collection[int] = (),
) -> str:
    """The title of the one document the caller's latest answer in the conversation cited, or ""
    when it cited none or several (then a follow-up's "it" names no single document), or one that
    is now in a case of `hidden_cases` (walled off from the caller since)."""
    latest = (
        audit_list(tenant=tenant)
        .filter(conversation_id=conversation_id, user_id=user_id, api_key_prefix=api_key_prefix)
        .filter(status="answered")
        .order_by("-created_at", "-pk")
        .values_list("documents_used", flat=True)
        .first()
    )
    if not latest or len(set(latest)) != 1:
        return ""
    documents = owned_list(Document, tenant=tenant).exclude(case_id__in=sorted(hidden_cases))
    document = documents.filter(pk=next(iter(latest))).only("title").first()
    return document.title if document else ""


# --- Admin API: ranking weights row, audit search ----------------------------------------------

# The boolean flags an audit row's `flags` records (rag.pipeline.result.flags); `audit_search(flag=)`
# finds rows where one is true.
AUDIT_FLAGS = (
    "hallucination_warning",
    "hallucination_detected",
    "needs_verification",
    "redactions_applied",
    "cache_hit",
    "prompt_injection_detected",
    "indirect_injection_detected",
    "token_warning",
    "answer_sanitized",
)


def ranking_weights_row(*, tenant: Tenant) -> RankingWeights | None:
    """The tenant's own `RankingWeights` row, or None while it ranks with the settings."""
    return owned_list(RankingWeights, tenant=tenant).select_related("updated_by").first()


def audit_search(
    *,
    tenant: Tenant,
    username: str | None = None,
    api_key_prefix: str | None = None,
    status: str | None = None,
    template_id: str | None = None,
    cache_hit: bool | None = None,
    flag: str | None = None,
    error_type: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    request_id: str | None = None,
    conversation_id: str | None = None,
    hidden_cases: Collection[int] = (),
) -> QuerySet[AuditLog]:
    """The tenant's audit rows matching every filter given (None: no restriction), newest first.

    `since` is inclusive and `until` exclusive; `flag` names one of AUDIT_FLAGS that must be true;
    rows about `hidden_cases` (walled off from the reader) are left out (`audit_outside_walls`).
    The rows leave out `options` and `result` (large; `audit_get` has them).
    """
    if flag is not None and flag not in AUDIT_FLAGS:
        raise ValueError(f"unknown audit flag {flag!r}")
    lookups = {
        "user__username": username,
        "api_key_prefix": api_key_prefix,
        "status": status,
        "template_id": template_id,
        "cache_hit": cache_hit,
        "error_type": error_type,
        "created_at__gte": since,
        "created_at__lt": until,
        "request_id": request_id,
        "conversation_id": conversation_id,
    }
    rows = audit_list(tenant=tenant).filter(
        **{key: value for key, value in lookups.items() if value is not None}
    )
    if flag is not None:
        rows = rows.filter(flags__contains={flag: True})
    rows = audit_outside_walls(rows, hidden_cases)
    return rows.select_related("user").defer("options", "result").order_by("-created_at", "-pk")


def audit_outside_walls(rows: QuerySet[AuditLog], hidden_cases: Collection[int]) -> QuerySet[AuditLog]:
    """`rows` without those about a case in `hidden_cases`: a question scoped to one of them, or
    whose answer retrieved or cited one of their documents. Walls hide a matter's questions and
    answers from everyone not on the wall, the firm's audit log included."""
    if not hidden_cases:
        return rows
    table, documents = AuditLog._meta.db_table, Document._meta.db_table
    scoped_cases = f"{table}.options -> 'filters' -> 'case_ids'"
    about_walled = (
        f"NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text({table}.documents_retrieved || "  # noqa: S608
        f"{table}.documents_used) AS used(id) JOIN {documents} d ON d.id::text = used.id "
        "WHERE d.case_id = ANY(%s)) "
        # A question scoped to a walled case (its ids as numbers or strings, as the request gave
        # them); a row without such a scope is kept (a JSON path that is missing is no match).
        f"AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof({scoped_cases}) "
        f"= 'array' THEN {scoped_cases} ELSE '[]'::jsonb END) AS scoped(id) WHERE scoped.id = ANY(%s))"
    )
    walled = sorted(hidden_cases)
    # Bound parameters only; the table names come from the models' meta.
    return rows.extra(where=[about_walled], params=[walled, [str(pk) for pk in walled]])  # noqa: S610


def walled_request_ids(*, tenant: Tenant, hidden_cases: Collection[int]) -> set[str]:
    """The request ids of the tenant's audit rows about a case in `hidden_cases` (see
    `audit_outside_walls`): what an export of answers must not show to someone off the wall."""
    if not hidden_cases:
        return set()
    rows = audit_list(tenant=tenant)
    outside = audit_outside_walls(rows, hidden_cases).values("pk")
    return set(rows.exclude(pk__in=outside).values_list("request_id", flat=True))


def audit_get(*, tenant: Tenant, request_id: str, hidden_cases: Collection[int] = ()) -> AuditLog:
    """The tenant's newest audit row of `request_id` (the column is not unique), or `NotFound`
    (also for a row about a case in `hidden_cases`)."""
    # A NUL is in no request id, and PostgreSQL refuses it in a lookup: not found, not a 500.
    rows = audit_list(tenant=tenant).filter(request_id=request_id).order_by("-created_at", "-pk")
    rows = audit_outside_walls(rows, hidden_cases)
    newest = None if "\x00" in request_id else rows.values_list("pk", flat=True).first()
    # pk=None matches nothing: a missing row gives owned_get's NotFound, like another tenant's.
    return owned_get(AuditLog, tenant=tenant, pk=newest)
