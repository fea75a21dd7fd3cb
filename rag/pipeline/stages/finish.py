"""Stages 13-15: assemble the result, store it in the cache, then record metrics, the JSON log
line and the audit row (the last runs even when a critical stage failed)."""

from __future__ import annotations

import json
import logging
import math

from rag.models import AuditLog, AuditStatus
from ragsite.rows import insert_row

from .. import cache, metrics, result
from ..context import QueryContext, loggable_metadata

logger = logging.getLogger("rag.query")


class AssembleStage:
    name = "assemble"
    critical = True
    runs_after_halt = True

    def run(self, ctx: QueryContext) -> QueryContext:
        if ctx.cache_hit:
            ctx.result = result.refreshed_cached_result(ctx)
        elif ctx.config.dry_run:
            ctx.result = result.dry_run_result(ctx)
        else:
            ctx.result = result.answer_result(ctx)
        return ctx


class CacheStoreStage:
    name = "cache_store"
    critical = False  # a cache outage must not fail an answered query
    runs_after_halt = True

    def run(self, ctx: QueryContext) -> QueryContext:
        if ctx.cache_key and not ctx.cache_hit and ctx.result is not None:
            cache.set(ctx.cache_key, {"result": ctx.result})
            ctx.note(self.name, stored=True)
        return ctx


class RecordStage:
    """Metrics, one JSON log line and one audit row per query, whatever happened."""

    name = "record"
    critical = False
    runs_after_halt = True

    def run(self, ctx: QueryContext) -> QueryContext:
        summary = summarize(ctx)
        _metrics(ctx, summary)
        logger.info("query finished", extra=log_fields(ctx, summary))
        _audit(ctx, summary)
        return ctx


def summarize(ctx: QueryContext) -> dict:
    """What the log, metrics and audit say about the run."""
    data = ctx.result or {}
    provenance = data.get("provenance", {})
    flags = data.get("flags", {})
    if ctx.failure is not None:
        status = AuditStatus.FAILED
    elif ctx.config.dry_run:
        status = AuditStatus.DRY_RUN
    elif data.get("answer") is None:
        status = AuditStatus.NOT_FOUND
    else:
        status = AuditStatus.ANSWERED
    template = ctx.template.template_id if ctx.template else (ctx.config.template_id or "")
    # Read from the run itself, not only the result: a failed run has none, yet may have retrieved
    # passages and paid for model calls before it failed.
    retrieved = [p.document_id for p in ctx.retrieval.passages] if ctx.retrieval else []
    last = ctx.generation
    return {
        "status": status,
        "template": template,
        "docs_retrieved": provenance.get("docs_retrieved", len(retrieved)),  # passages
        "documents_retrieved": provenance.get("documents_retrieved", list(dict.fromkeys(retrieved))),
        "documents_used": provenance.get("documents_used", []),
        "flags": flags,
        "confidence": data.get("confidence_score"),
        "citations": len(data.get("citations", [])),
        "tokens_used": sum(g.tokens_used for g in ctx.generations),
        "cost_estimate": round(sum(g.cost_estimate for g in ctx.generations), 6),
        "model_provider": provenance.get("model_provider") or (last.provider if last else ""),
        "model": provenance.get("model") or (last.model if last else ""),
    }


def _metrics(ctx: QueryContext, summary: dict) -> None:
    tenant = ctx.tenant.slug
    # Only a resolved template names a series: a requested id that does not exist is caller input.
    template = ctx.template.template_id if ctx.template else "unknown"
    metrics.QUERIES.labels(tenant, template, summary["status"]).inc()
    metrics.QUERY_DURATION.labels(tenant, template).observe(ctx.total_ms / 1000)
    if ctx.cache_key:
        (metrics.CACHE_HITS if ctx.cache_hit else metrics.CACHE_MISSES).labels(tenant).inc()
    if ctx.cache_hit:
        return
    if ctx.retrieval is not None:
        metrics.DOCUMENTS_RETRIEVED.labels(tenant).observe(summary["docs_retrieved"])
        metrics.SEARCH_LATENCY.labels(tenant).observe(ctx.stage_ms(*result.SEARCH_STAGES) / 1000)
    for generation in ctx.generations:
        metrics.MODEL_CALLS.labels(generation.provider, generation.model).inc()
        metrics.MODEL_TOKENS.labels(generation.provider).observe(generation.tokens_used)
        metrics.MODEL_COST.labels(generation.provider).observe(generation.cost_estimate)
    if summary["status"] == AuditStatus.ANSWERED:
        metrics.CITATIONS.labels(template).observe(summary["citations"])
        metrics.CONFIDENCE.labels(template).observe(summary["confidence"] or 0.0)
    if ctx.first_verification is not None and ctx.first_verification.hallucination_detected:
        metrics.HALLUCINATIONS.labels(tenant).inc()


def log_fields(ctx: QueryContext, summary: dict) -> dict:
    """The spec's structured log line (ids and numbers only: never the question's text).
    `docs_retrieved` counts passages, as in the provenance and `rag_documents_retrieved`;
    `documents_retrieved` lists their documents; `stages` is what each stage noted."""
    passages = ctx.retrieval.passages if ctx.retrieval else []
    scores = [p.similarity_score for p in passages]
    last = ctx.generation
    return {
        "query_id": ctx.request_id,
        "tenant_id": ctx.tenant.pk,
        "template_id": summary["template"],
        "status": summary["status"],
        "docs_retrieved": summary["docs_retrieved"],
        "docs_used": len(summary["documents_used"]),
        "documents_retrieved": summary["documents_retrieved"],
        "similarity_distribution": {
            "min": round(min(scores), 4),
            "max": round(max(scores), 4),
            "avg": round(sum(scores) / len(scores), 4),
        }
        if scores
        else None,
        "model_used": f"{last.provider}/{last.model}" if last else summary["model"] or None,
        "latency": {
            "search_ms": ctx.stage_ms(*result.SEARCH_STAGES),
            "rank_ms": ctx.stage_ms("rank"),
            "build_ms": ctx.stage_ms(*result.BUILD_STAGES),
            "inference_ms": round(sum(g.latency_ms for g in ctx.generations), 2),
            "post_ms": ctx.stage_ms("postprocess", "verify"),
            "total_ms": ctx.total_ms,
        },
        "flags": {
            "cache_hit": ctx.cache_hit,
            "fallback": ctx.not_found_reason is not None,
            "hallucination": bool(ctx.first_verification and ctx.first_verification.hallucination_detected),
            "prompt_injection": bool(ctx.sanitized and ctx.sanitized.prompt_injection_detected),
        },
        "error_type": type(ctx.failure).__name__ if ctx.failure else None,
        "stage_errors": [error["stage"] for error in ctx.errors],
        "stages": {stage: loggable_metadata(noted) for stage, noted in ctx.stage_metadata.items()},
    }


def _audit(ctx: QueryContext, summary: dict) -> None:
    failure = ctx.failure
    audit = AuditLog(
        tenant=ctx.tenant,
        request_id=ctx.request_id,
        user_id=ctx.user_id,
        conversation_id=ctx.config.conversation_id or "",
        query=ctx.sanitized.sanitized_query if ctx.sanitized else _printable(ctx.question),
        search_query=ctx.search_query
        if ctx.sanitized and ctx.search_query != ctx.sanitized.sanitized_query
        else "",
        template_id=summary["template"],
        status=summary["status"],
        error_type=getattr(failure, "error_type", type(failure).__name__) if failure else "",
        documents_retrieved=summary["documents_retrieved"],
        documents_used=summary["documents_used"],
        flags={**summary["flags"], "origin": ctx.origin} if ctx.origin else summary["flags"],
        confidence=summary["confidence"],
        latency_ms=ctx.total_ms,
        tokens_used=summary["tokens_used"],
        cost_estimate=summary["cost_estimate"],
        model_provider=summary["model_provider"],
        model=summary["model"],
        cache_hit=ctx.cache_hit,
        api_key_prefix=ctx.api_key_prefix,
        options=_json_safe(ctx.options),
        result=ctx.result if failure is None else None,
    )
    insert_row(audit)  # one per query, cache hits included: not worth an ORM compilation each


def _json_safe(options: dict) -> dict:
    """The caller's options as PostgreSQL's JSON can store them: a refused request may carry
    anything, NUL characters and numbers JSON has no word for (`1e400` parses to infinity, which
    jsonb refuses) included."""
    try:
        return _without_nul(json.loads(json.dumps(options, default=str)))
    except (TypeError, ValueError):
        return {"unreadable": True}


def _without_nul(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "inf", "-inf", "nan"
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_without_nul(item) for item in value]
    if isinstance(value, dict):
        return {_without_nul(key): _without_nul(item) for key, item in value.items()}
    return value


def _printable(question) -> str:
    """A refused question as it can be stored: a string without NUL bytes, at most 2000 characters."""
    return str(question).replace("\x00", "")[:2000]
