"""Stages 7-9: select the template, build the context, build the prompt.

The template is chosen before the context is built (the spec lists it after): the context labels
each passage with its citation token, and the token depends on the template's citation style.
"""

from __future__ import annotations

from django.conf import settings

from rag.llm import cited
from rag.retrieval import service as retrieval
from rag.review.compare import Comparison
from rag.review.model import SURE
from ragsite.exceptions import ConfigurationError
from templates_admin.rendering import MAX_FOLLOW_UPS, render

from .. import tokens
from ..answerability import answerability, missing_clause
from ..context import QueryContext
from ..context_builder import SEPARATOR, build_context
from ..reasoning import reasoning_block
from ..review_prompt import (
    affirmed_block,
    candidates_block,
    compare_block,
    doubted_block,
    restricted_block,
    review_block,
)

# A list over a matter quotes one passage per document (~150 tokens each, cut around the clause).
REVIEW_TOKEN_BUDGET = 12_000
# The context's place in the prompt when the passages go as search results (rag.llm.cited).
ATTACHED_SOURCES = "The sources are the search results given before this message."


class SelectTemplateStage:
    name = "select_template"
    critical = True
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        template, config = ctx.template, ctx.config
        ctx.citation_style = config.citation_style or template.citation_style
        ctx.strictness = config.strictness or template.strictness
        ctx.follow_up_count = follow_up_count(config, template)
        ctx.note(
            self.name,
            template_id=template.template_id,
            template_version=template.version,
            builtin=template.is_builtin,
            citation_style=ctx.citation_style,
            strictness=ctx.strictness,
            follow_up_count=ctx.follow_up_count,
        )
        return ctx


def follow_up_count(config, template) -> int:
    """How many follow-up questions the answer gets: the request's count; else the template's when
    the request picks it (`template_id`, `response_style`) or the tenant made it its own; else
    RAG_DEFAULT_FOLLOW_UP_COUNT (a request that asks for nothing gets the operator's defaults,
    like RAG_DEFAULT_TEMPLATE, unless the firm has set its own)."""
    if config.follow_up_count is not None:
        return config.follow_up_count
    if config.template_id or config.response_style or not template.is_builtin:
        return template.follow_up_count
    default = settings.RAG_DEFAULT_FOLLOW_UP_COUNT
    if isinstance(default, bool) or not isinstance(default, int) or not 0 <= default <= MAX_FOLLOW_UPS:
        # The operator's mistake, not the request's: 503 naming the setting, not 400.
        raise ConfigurationError(
            f"RAG_DEFAULT_FOLLOW_UP_COUNT {default!r} is out of range.",
            details={"RAG_DEFAULT_FOLLOW_UP_COUNT": f"0 to {MAX_FOLLOW_UPS}."},
        )
    return default


class BuildContextStage:
    """Fetches the kept passages (metadata, snippets, redaction) and fences them into the context."""

    name = "build_context"
    critical = True
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        if ctx.retrieval is None:  # agentic mode has gathered its passages already
            ctx.retrieval = retrieval.passages(ctx.ranked, reader=ctx.reader)
        budget = ctx.config.token_budget
        if ctx.review is not None:  # a list quotes each document: its passages are cut short
            budget = max(budget, REVIEW_TOKEN_BUDGET)
        ctx.context = build_context(
            ctx.retrieval.passages, citation_style=ctx.citation_style, token_budget=budget
        )
        built = ctx.context
        ctx.note(
            self.name,
            passages=len(built.entries),
            dropped=len(built.dropped_chunk_ids),
            tokens=built.tokens,
            budget=built.budget,
            injection_flagged=list(built.injection_flagged),
        )
        if not built.entries and not ctx.config.dry_run:
            ctx.not_found_reason = "no_passages"
            ctx.halt("no_passages")
            return ctx
        routing = ctx.retrieval.routing
        if routing.ambiguous and not routing.documents and not ctx.config.dry_run:
            ctx.not_found_reason = "clarify"  # too many documents fit to answer each: ask which
            ctx.halt("clarify")
            return ctx
        if ctx.review is not None:
            return ctx  # each document was judged by the matter review: no gate for the whole
        missing = missing_clause(ctx.tenant, ctx.retrieval, ctx.search_query, ctx.config.filters)
        ctx.answerability = 0.0 if missing else answerability(ctx.retrieval, ctx.search_query)
        # A question in parts is judged part by part (each reasoning step has its own "not found");
        # the whole reads as no single clause's question.
        answerable = (
            ctx.reasoning is not None
            or ctx.dated
            or ctx.answerability is None
            or ctx.answerability >= settings.RAG_MIN_ANSWERABILITY
        )
        ctx.note(self.name, answerability=ctx.answerability, answerable=answerable)
        if missing:
            ctx.note(self.name, missing_clause=missing.clause)
        sure = ctx.clause_probability is not None and ctx.clause_probability >= SURE
        if not answerable and sure and ctx.evidence_passages:
            # The review read every passage and is fairly sure the clause is there: its evidence
            # answers ("Yes." and the clause), where search's passages do not, and where the word
            # lists say the document never uses the clause's words (it is worded in a way they
            # miss).
            ctx.context = build_context(
                list(ctx.evidence_passages), citation_style=ctx.citation_style, token_budget=budget
            )
            ctx.from_evidence = True
            ctx.note(self.name, answered_from="clause_evidence")
            return ctx
        if not answerable and not ctx.config.dry_run:
            ctx.not_found_reason = "not_in_documents"
            ctx.not_found_message = missing.message if missing else None
            ctx.halt("not_in_documents")
        return ctx


class BuildPromptStage:
    name = "build_prompt"
    critical = True
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        ctx.prompt = build_prompt(ctx, strictness=ctx.strictness)
        ctx.note(self.name, estimated_tokens=prompt_tokens(ctx.prompt))
        if ctx.config.dry_run:
            ctx.halt("dry_run")
        return ctx


def build_prompt(ctx: QueryContext, *, strictness: str):
    """The answer's prompt; once reasoning steps are answered, they end its context (before the
    question and the template's instructions) for the synthesis. With Claude's citations
    (rag.llm.cited) the passages go beside the prompt as search results, not in its context."""
    sources_attached = cited.attached()
    context = ATTACHED_SOURCES if sources_attached else ctx.context.text
    if ctx.reasoning is not None and ctx.reasoning.done:
        context = f"{context}{SEPARATOR}{reasoning_block(ctx.reasoning)}"
    if isinstance(ctx.review, Comparison):
        context = f"{context}{SEPARATOR}{compare_block(ctx.review, ctx.context.entries)}"
    elif ctx.review is not None:
        context = f"{context}{SEPARATOR}{review_block(ctx.review, len(ctx.context.entries))}"
    elif ctx.each_candidate:
        ambiguous = ctx.retrieval.routing.ambiguous
        context = f"{context}{SEPARATOR}{candidates_block(ctx.context.entries, ambiguous)}"
    if ctx.affirmed:
        context = f"{context}{SEPARATOR}{affirmed_block(ctx.affirmed)}"
    if ctx.restricted:
        context = f"{context}{SEPARATOR}{restricted_block(ctx.restricted)}"
    if ctx.doubted:
        context = f"{context}{SEPARATOR}{doubted_block(ctx.doubted)}"
    return render(
        ctx.template,
        context=context,
        question=ctx.search_query,
        citation_style=ctx.citation_style,
        strictness=strictness,
        follow_up_count=ctx.follow_up_count,
        boundary="" if sources_attached else ctx.context.boundary,
        sources_attached=sources_attached,
    )


def prompt_tokens(prompt) -> int:
    return tokens.count_tokens(prompt.system) + tokens.count_tokens(prompt.user)
