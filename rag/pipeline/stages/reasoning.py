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
from dataclasses import dataclass

from django.conf import settings

from rag.retrieval import service as retrieval
from rag.retrieval.filters import SearchFilters
from templates_admin.rendering import render

from ..context import QueryContext
from ..context_builder import ContextEntry, answer_focus, context_text
from ..postprocess import process
from ..reasoning import (
    COMPARE,
    LOW_CONFIDENCE,
    NO_PASSAGES,
    NOT_IN_PASSAGES,
    UNSUPPORTED,
    Reasoning,
    ReasoningStep,
    split_question,
)
from ..verify import verify
from .answer import strip_citations
from .generate import call_model
from .prompt import build_prompt
from .retrieve import best_cosine

STEP_PASSAGES = 3  # passages searched for each sub-question


class ReasoningSearchStage:
    name = "reasoning_search"
    searches = True  # skipped after a matter review (rag.review)
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
        scope = _Scope.of(ctx)
        steps, found = [], []
        for number, (question, focus) in enumerate(zip(split.questions, split.focuses, strict=True), start=1):
            if number > depth:
                break
            proper, passages = _search(ctx, question, compare=split.kind == COMPARE, scope=scope)
            step = ReasoningStep(
                number, question, proper or focus, passages={p.chunk_id: p for p in passages}
            )
            if not passages:
                step.not_found_reason = NO_PASSAGES
            steps.append(step)
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


@dataclass(frozen=True)
class _Scope:
    """The documents the whole question was narrowed to, which its parts keep to."""

    evidence: tuple[int, ...] = ()  # agentic mode: the documents of the agent's evidence
    named: tuple[int, ...] = ()  # the documents the question names (routing with a reference)
    gated: bool = True  # the parts pass the "nothing relevant" gate (the question did not)

    @classmethod
    def of(cls, ctx: QueryContext) -> _Scope:
        gated = not ctx.retrieval.passages
        if ctx.agent is not None:  # the agent applied the question's constraints (doc_id, year, party)
            documents = tuple(dict.fromkeys(item.passage.document_id for item in ctx.agent.evidence))
            return cls(evidence=documents, gated=gated)
        routing = ctx.retrieval.routing
        named = tuple(d.document_id for d in routing.documents) if routing.reference else ()
        return cls(named=named, gated=gated)


def _search(ctx: QueryContext, question: str, *, compare: bool, scope: _Scope) -> tuple[str, list]:
    """A sub-question's question proper (without the document it names, "" when it names none) and
    best passages, searched like the question (same mode, filters, weights), within `scope`. A
    side of a comparison, or a part naming its document, is answered only from the documents it
    names, so one contract's clause is never presented as the other's; a part naming none keeps to
    the documents the whole question named ("… of the MSA, and what is the notice period?").
    The request's filters bound every part: the agent's documents only narrow them."""
    config = ctx.config
    filters = config.filters
    if scope.evidence:
        filters = filters.narrowed(SearchFilters(document_ids=scope.evidence))
        if filters is None:  # the agent's evidence lies outside the request's scope: nothing here
            return "", []
    found = retrieval.search(
        tenant=ctx.tenant,
        query=question,
        mode=config.search_mode,
        filters=filters,
        candidate_pool=max(settings.RAG_CANDIDATE_POOL, config.top_k),
        index_version=ctx.index_version,
    )
    proper = found.question if found.routing.reference else ""
    ranked = retrieval.rank(found, top_k=config.top_k, similarity_threshold=config.similarity_threshold)
    best = best_cosine(ranked)
    # The "nothing relevant" gate is calibrated on whole questions; a short part ("who is the
    # seller?") scores lower against the same passage. When the question itself passed it, a part
    # is not gated again: its answer is still held to the citation and confidence checks.
    if scope.gated and best is not None and best < settings.RAG_MIN_SEMANTIC_SIMILARITY:
        return proper, []  # nothing close enough to this part, as the rank stage decides for a question
    if found.routing.documents and (compare or found.routing.reference):
        ranked = dataclasses.replace(ranked, items=[item for item in ranked.items if item[0].routed])
    elif scope.named:
        named = set(scope.named)
        items = [item for item in ranked.items if item[0].hit.document_id in named]
        ranked = dataclasses.replace(ranked, items=items)
    ranked = retrieval.rerank(ranked, enabled=config.reranking_enabled, max_chunks=STEP_PASSAGES)
    return proper, retrieval.passages(ranked, reader=ctx.reader).passages


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
    searches = True  # skipped after a matter review (rag.review)
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
            else:  # none found, or none within the token budget
                step.not_found_reason = NO_PASSAGES
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
    """Answer `step` from its passages, held to the final answer's standards: only verified
    citations are kept, and an answer left with none, under MIN_CONFIDENCE_THRESHOLD, or with
    claims its passages do not support is "not found" (None), so the synthesis never builds on it."""
    # A passage's answer window in the context was chosen for the whole question: the step is
    # answered from the windows its own search chose for it (the cross-encoder read this part),
    # else from the passage's sentences.
    sources = tuple(_step_source(step, entry) for entry in entries)
    prompt = render(
        ctx.template,
        context=context_text(entries),
        question=step.question,
        citation_style=ctx.citation_style,
        strictness=ctx.strictness,
        follow_up_count=0,
        boundary=ctx.context.boundary,
    )
    # The provider's structured question is the focus: the document's name is in every passage's
    # header already, and quoting by it would pick the sentence naming the parties. The prompt a
    # model reads keeps the whole sub-question.
    generation = call_model(ctx, prompt, question=step.focus or step.question, sources=sources)
    processed = process(generation.text, sources, follow_up_count=0, truncated=generation.truncated)
    if processed.answer is None:
        step.not_found_reason = NOT_IN_PASSAGES
        return
    verification = verify(processed, sources)
    bad = set(verification.invalid_citations) | set(verification.misquoted)
    kept = [citation for citation in processed.citations if citation.token not in bad]
    if not kept:
        step.not_found_reason = NOT_IN_PASSAGES
        return
    if verification.unsupported:
        step.not_found_reason = UNSUPPORTED
        return
    if processed.confidence is not None:
        confidence = processed.confidence
    else:
        confidence = round(sum(c.source.similarity_score for c in kept) / len(kept), 4)
    if confidence < settings.MIN_CONFIDENCE_THRESHOLD:
        step.not_found_reason = LOW_CONFIDENCE
        return
    step.answer = strip_citations(processed.answer, bad) if bad else processed.answer
    step.citations = list(dict.fromkeys(citation.source.citation_id for citation in kept))
    step.quotes = [(citation.source.citation_id, citation.snippet) for citation in kept]
    step.confidence = confidence


def _step_source(step: ReasoningStep, entry: ContextEntry):
    """The entry's source with the answer window the step's own search chose, if it has one."""
    own = step.passages.get(entry.passage.chunk_id)
    if own is None or own.answer_score is None:
        return dataclasses.replace(entry.source, answer_score=None, focus="")
    return dataclasses.replace(
        entry.source, answer_score=own.answer_score, focus=answer_focus(own, entry.source.text)
    )
