"""Stage 2: answer from the cache when the same question met the same corpus, template, weights
and options (rag.pipeline.cache). Also resolves what the key needs: the tenant's index and
weights versions and the prompt template (a template id the tenant cannot see is a 404 here;
a template_id with a response_style other than the template's, a 400)."""

from __future__ import annotations

from django.conf import settings

from rag import selectors
from rag.llm.base import configured_model
from ragsite.exceptions import NotFound
from templates_admin.builtins import BUILTIN_TEMPLATE_ID_BY_STYLE
from templates_admin.selectors import template_get_by_version

from .. import cache
from ..config import refuse_style_conflict
from ..context import QueryContext


def template_id_for(config) -> str:
    """The template a query uses: its template_id, else the built-in of its response_style, else
    RAG_DEFAULT_TEMPLATE."""
    if config.template_id:
        return config.template_id
    if config.response_style:
        return BUILTIN_TEMPLATE_ID_BY_STYLE[config.response_style]
    return settings.RAG_DEFAULT_TEMPLATE


def reader_key(ctx: QueryContext) -> str:
    """Who may read confidential text: answers differ between readers, so keys do too."""
    if ctx.reader.reads_all_confidential:
        return "all-confidential"
    return f"user:{ctx.reader.user_id}" if ctx.reader.user_id is not None else "anonymous"


class CacheLookupStage:
    name = "cache_lookup"
    critical = True  # resolving the template and versions may fail (404, database down)
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        tenant = ctx.tenant
        snapshot = selectors.query_snapshot_get(tenant=tenant, template_id=template_id_for(ctx.config))
        ctx.index_version, ctx.indexed_at = snapshot.index_version, snapshot.indexed_at
        ctx.weights_version = snapshot.weights_version
        if snapshot.template_pk is None:
            raise NotFound("Prompt template not found.")
        ctx.template = template_get_by_version(pk=snapshot.template_pk, version=snapshot.template_version)
        refuse_style_conflict(ctx.config, ctx.template)
        skip = self._skip_reason(ctx)
        if skip:
            ctx.note(self.name, skipped=skip)
            return ctx
        template = ctx.template
        ctx.cache_key = cache.cache_key(
            tenant=tenant.pk,
            question=cache.normalized_question(ctx.sanitized.sanitized_query),
            template=[template.template_id, template.pk, template.version],
            options=ctx.config.cache_fields(),
            reader=reader_key(ctx),
            model=configured_model(),
            index_version=ctx.index_version,
            weights_version=ctx.weights_version,
            settings=[
                settings.RAG_MIN_SIMILARITY_THRESHOLD,
                settings.RAG_MIN_SEMANTIC_SIMILARITY,
                # The weights of a tenant without its own (weights_version 0).
                [settings.RAG_SIMILARITY_WEIGHT, settings.RAG_RECENCY_WEIGHT, settings.RAG_TRUST_WEIGHT],
                settings.MIN_CONFIDENCE_THRESHOLD,
                settings.RAG_MAX_SNIPPETS,
                settings.RAG_SNIPPET_SIZE,
                settings.RAG_QUERY_EXPANSION,
                settings.RAG_RERANKER_MODEL,
                settings.RAG_MAX_RETRIES_ON_HALLUCINATION,
            ],
        )
        entry = cache.get(ctx.cache_key)
        ctx.note(self.name, hit=entry is not None)
        if entry is not None:
            ctx.result = entry["result"]
            ctx.cache_hit = True
            ctx.halt("cache_hit")
        return ctx

    @staticmethod
    def _skip_reason(ctx: QueryContext) -> str | None:
        if ctx.config.dry_run:
            return "dry_run"
        if not ctx.config.use_cache:
            return "use_cache=false"
        if ctx.config.conversation_id:
            return "conversation"  # the answer depends on the earlier turns
        return None
