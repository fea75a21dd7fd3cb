"""Stage 5, chain of thought (rag.pipeline.reasoning), in two halves around the context:

1. `ReasoningSearchStage` (after the search): when `cot_enabled` and the question compares or has
   several parts, each sub-question (at most `max_reasoning_depth`) is searched on its own, and its
   best passages join the question's, interleaved so every part keeps evidence within the budget.
2. `ReasoningStage` (once the prompt is built): each sub-question is answered from its own passages
   with the same template, its citations checked like an answer's; then the answer's prompt gains
   the steps, and the generation stage synthesizes the final answer from them.

The steps cite the same tokens as the final context, so a step's citation opens the same passage.
"""

from __future__ import annotations

import dataclasses
import time

from django.conf import settings

from rag.retrieval import service as retrieval
from templates_admin.rendering import render

from ..context import QueryContext
from ..context_builder import ContextEntry, context_text
from ..postprocess import process
from ..reasoning import COMPARE, Reasoning, ReasoningStep, split_question
from ..verify import verify
from .answer import strip_citations
from .generate import call_model
from .prompt import build_prompt
from .retrieve import best_cosine

STEP_PASSAGES = 3  # passages searched for each sub-question


class ReasoningSearchStage:
    name = "reasoning_search"
    critical = True  # a failing search is VectorStoreUnavailable, as in the retrieve stage
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        config = ctx.config
        if not config.cot_enabled:
            ctx.note(self.name, used=False, reason="cot_disabled")
            return ctx
        split = split_question(ctx.search_query)
        if split is None:
            ctx.note(self.name, used=False, reason="simple_question")
            return ctx
        if ctx.retrieval is None:  # the plain pipeline's passages (agentic mode has set its own)
            ctx.retrieval = retrieval.passages(ctx.ranked, reader=ctx.reader)
        depth = config.max_reasoning_depth
        steps, found = [], []
        for number, (question, focus) in enumerate(zip(split.questions, split.focuses, strict=True), start=1):
            if number > depth:
                break
            passages = _search(ctx, question, one_document=split.kind == COMPARE)
            steps.append(ReasoningStep(number, question, focus, chunk_ids=[p.chunk_id for p in passages]))
            found.append(passages)
        limit = max(config.context_passages, STEP_PASSAGES * len(steps))
        merged = _interleaved([*found, ctx.retrieval.passages])[:limit]
        ctx.retrieval = dataclasses.replace(ctx.retrieval, passages=merged)
        ctx.reasoning = Reasoning(split.kind, steps, skipped=list(split.questions[depth:]))
        ctx.note(
            self.name,
            used=True,
            strategy=split.kind,
            sub_questions=len(steps),
            skipped=len(split.questions) - len(steps),
            passages=[len(passages) for passages in found],
        )
        return ctx


def _search(ctx: QueryContext, question: str, *, one_document: bool) -> list:
    """A sub-question's best passages, searched like the question (same mode, filters, weights).
    `one_document`: a side of a comparison is answered only from the documents it names, when
    routing found them, so one contract's clause is never presented as the other's."""
    config = ctx.config
    found = retrieval.search(
        tenant=ctx.tenant,
        query=question,
        mode=config.search_mode,
        filters=config.filters,
        candidate_pool=max(settings.RAG_CANDIDATE_POOL, config.top_k),
        index_version=ctx.index_version,
    )
    ranked = retrieval.rank(found, top_k=config.top_k, similarity_threshold=config.similarity_threshold)
    best = best_cosine(ranked)
    if best is not None and best < settings.RAG_MIN_SEMANTIC_SIMILARITY:
        return []  # nothing close enough to this part, as the rank stage decides for a question
    if one_document and found.routing.documents:
        ranked = dataclasses.replace(ranked, items=[item for item in ranked.items if item[0].routed])
    ranked = retrieval.rerank(ranked, enabled=config.reranking_enabled, max_chunks=STEP_PASSAGES)
    return retrieval.passages(ranked, reader=ctx.reader).passages


def _interleaved(lists: list[list]) -> list:
    """The passages of every list in turns (first of each, then second of each...), each chunk once."""
    merged, seen = [], set()
    for position in range(max((len(items) for items in lists), default=0)):
        for items in lists:
            if position < len(items) and items[position].chunk_id not in seen:
                seen.add(items[position].chunk_id)
                merged.append(items[position])
    return merged


class ReasoningStage:
    name = "reasoning"
    critical = True  # the steps' model calls fail with generation's typed errors
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        reasoning = ctx.reasoning
        if reasoning is None:
            return ctx
        entries = {entry.passage.chunk_id: entry for entry in ctx.context.entries}
        for step in reasoning.steps:
            started = time.perf_counter()
            own = [entries[chunk_id] for chunk_id in step.chunk_ids if chunk_id in entries]
            step.citation_ids = [entry.source.citation_id for entry in own]
            if own:
                _answer(ctx, step, own)
            step.execution_time_ms = round((time.perf_counter() - started) * 1000, 2)
        reasoning.done = True
        ctx.prompt = build_prompt(ctx, strictness=ctx.strictness)  # now followed by the steps
        ctx.note(
            self.name,
            strategy=reasoning.strategy,
            steps=len(reasoning.steps),
            answered=len(reasoning.answered),
            total_confidence=reasoning.total_confidence,
        )
        return ctx


def _answer(ctx: QueryContext, step: ReasoningStep, entries: list[ContextEntry]) -> None:
    """Answer `step` from its passages; only verified citations are kept, and an answer left with
    none is "not found" (None), as the final answer would be."""
    sources = tuple(entry.source for entry in entries)
    prompt = render(
        ctx.template,
        context=context_text(entries),
        question=step.question,
        citation_style=ctx.citation_style,
        strictness=ctx.strictness,
        follow_up_count=0,
    )
    # The provider's structured question is the focus: the document's name is in every passage's
    # header already, and quoting by it would pick the sentence naming the parties. The prompt a
    # model reads keeps the whole sub-question.
    generation = call_model(ctx, prompt, question=step.focus or step.question, sources=sources)
    processed = process(generation.text, sources, follow_up_count=0)
    if processed.answer is None:
        return
    verification = verify(processed, sources)
    bad = set(verification.invalid_citations) | set(verification.misquoted)
    kept = [citation for citation in processed.citations if citation.token not in bad]
    if not kept:
        return
    step.answer = strip_citations(processed.answer, bad) if bad else processed.answer
    step.citations = list(dict.fromkeys(citation.source.citation_id for citation in kept))
    step.quotes = [(citation.source.citation_id, citation.snippet) for citation in kept]
    if processed.confidence is not None:
        step.confidence = processed.confidence
    else:
        step.confidence = round(sum(c.source.similarity_score for c in kept) / len(kept), 4)
