"""Stage 2: answer from the cache when the same question met the same corpus, template, weights
and options (rag.pipeline.cache). Also resolves what the key needs: the tenant's index and
weights versions and the prompt template (a template id the tenant cannot see is a 404 here;
a template_id with a response_style other than the template's, a 400)."""

from __future__ import annotations

from django.conf import settings

from rag import selectors
from rag.llm.base import configured_model
from rag.llm.overrides import ollama_host
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


# Providers whose answer is a function of the prompt alone: temperature changes nothing there.
DETERMINISTIC_PROVIDERS = frozenset({"extractive"})


def answer_options(config, provider: str) -> dict:
    """The query options that change the answer under `provider` (temperature only for a model
    that samples), so asking at another temperature still hits the extractive provider's cache."""
    options = config.cache_fields()
    if provider in DETERMINISTIC_PROVIDERS:
        options.pop("temperature", None)
    return options


class CacheLookupStage:
    name = "cache_lookup"
    critical = True  # resolving the template and versions may fail (404, database down)
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        tenant = ctx.tenant
        snapshot = selectors.query_snapshot_get(
            tenant=tenant,
            template_id=template_id_for(ctx.config),
            reads_all_confidential=ctx.reader.reads_all_confidential,
            user_id=ctx.reader.user_id,
        )
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
        model = configured_model()
        ctx.cache_key = cache.cache_key(
            tenant=tenant.pk,
            question=cache.normalized_question(ctx.sanitized.sanitized_query),
            template=[template.template_id, template.pk, template.version],
            options=answer_options(ctx.config, provider=model[0]),
            # What the reader may read, not who they are: colleagues with the same access share
            # answers, and a reader without access never meets one built from confidential text.
            readable_confidential=snapshot.readable_confidential,
            model=model,
            # RAGService(ollama_host=...) answers from another server than OLLAMA_HOST.
            model_host=ollama_host() if model[0] == "ollama" else None,
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
                settings.RAG_MIN_ANSWERABILITY,
                settings.RAG_DEFAULT_FOLLOW_UP_COUNT,
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
