"""Stages 4-6: retrieve candidates, rank them with the tenant's weights, rerank the best
(rag.retrieval.service's steps, run one stage each so each is timed)."""

from __future__ import annotations

import dataclasses

from django.conf import settings

from rag.retrieval import service as retrieval

from ..context import QueryContext
from ..routed import known_routing


def found_passages(ctx: QueryContext) -> list | None:
    """The passages search found, made from the plain pipeline's ranking when no stage has made them
    yet (agentic mode sets its own); None when nothing was searched."""
    if ctx.retrieval is None:
        if ctx.ranked is None:
            return None
        ctx.retrieval = retrieval.passages(ctx.ranked, reader=ctx.reader)
    return ctx.retrieval.passages


class RetrieveStage:
    name = "retrieve"
    searches = True  # skipped after a matter review (rag.review)
    critical = True  # VectorStoreUnavailable (503) when search fails
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        config = ctx.config
        ctx.candidates = retrieval.search(
            tenant=ctx.tenant,
            query=ctx.search_query,
            mode=config.search_mode,
            filters=config.filters,
            candidate_pool=max(settings.RAG_CANDIDATE_POOL, config.top_k),
            index_version=ctx.index_version,
            routing=known_routing(ctx),  # routed already by the matter review, when it ran
        )
        found = ctx.candidates
        ctx.note(
            self.name,
            mode=found.mode,
            candidates=len(found.candidates),
            clause_types=list(found.clause_types),
            routing=found.routing.as_metadata(),
            **found.timings,
        )
        return ctx


class RankStage:
    name = "rank"
    searches = True  # skipped after a matter review (rag.review)
    critical = True
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        chosen = _documents_chosen(ctx)
        threshold = (
            0.0 if chosen and ctx.config.similarity_threshold is None else ctx.config.similarity_threshold
        )
        ctx.ranked = retrieval.rank(ctx.candidates, top_k=ctx.config.top_k, similarity_threshold=threshold)
        weights = ctx.ranked.weights
        best = best_cosine(ctx.ranked)
        if chosen:
            ctx.note(self.name, thresholds="not applied: the documents were chosen")
        elif ctx.ranked.items and best is not None and best < settings.RAG_MIN_SEMANTIC_SIMILARITY:
            # Still read by the cross-encoder (rerank), which keeps any it reads as answering.
            below = (ctx.ranked.items + ctx.ranked.below)[: settings.RAG_RERANK_DEPTH]
            ctx.ranked = dataclasses.replace(ctx.ranked, items=[], below=below)
            ctx.note(self.name, dropped_reason="no passage semantically close to the question")
        ctx.note(
            self.name,
            best_cosine=None if best is None else round(best, 4),
            kept=len(ctx.ranked.items),
            weights={"similarity": weights.similarity, "recency": weights.recency, "trust": weights.trust},
        )
        return ctx


def _documents_chosen(ctx: QueryContext) -> bool:
    """Whether the caller chose the documents (`filters.document_ids`: "ask about this document")
    and the cross-encoder's answerability gate will judge whether they answer (build_context).
    Then the relevance thresholds, which tell relevant documents from the rest, do not apply: a
    short question ("What's the term?") is far, by cosine and keywords, from the clause that
    answers it, and the best passages of the chosen documents are the evidence however loosely
    they match the words (as for the agent's searches of documents it chose)."""
    return bool(ctx.config.filters.document_ids) and retrieval.get_reranker() is not None


def best_cosine(ranked) -> float | None:
    """The highest cosine similarity among the kept passages (None: keyword search, or chunks of
    another embedding model, where there is no cosine to judge by)."""
    cosines = [
        candidate.hit.similarity for candidate, _ in ranked.items if candidate.hit.similarity is not None
    ]
    return max(cosines) if cosines else None


class RerankStage:
    name = "rerank"
    searches = True  # skipped after a matter review (rag.review)
    critical = True  # a configured cross-encoder that cannot load is a ConfigurationError
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        ctx.ranked = retrieval.rerank(
            ctx.ranked, enabled=ctx.config.reranking_enabled, max_chunks=ctx.config.context_passages
        )
        ctx.note(self.name, reranker=ctx.ranked.reranker, kept=len(ctx.ranked.items))
        return ctx
