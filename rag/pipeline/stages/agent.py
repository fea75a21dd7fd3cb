"""Agentic mode's search stage: rag.agent's loop gathers the evidence in place of the plain
retrieve → rank → rerank stages; the ordinary stages then answer from it, cited `[doc_42]`
(the agentic spec's compose mode), verify the citations and record the run."""

from __future__ import annotations

import dataclasses

from django.conf import settings

from rag import selectors
from rag.agent.loop import run_agent
from rag.agent.planner import get_planner
from rag.agent.tools import AgentTools
from rag.retrieval.routing import Routing, route
from rag.retrieval.service import RetrievalResult, with_ambiguity

from ..context import QueryContext


class AgentSearchStage:
    name = "agent"
    searches = True  # skipped after a matter review (rag.review)
    critical = True  # search failures are VectorStoreUnavailable, as in the plain pipeline
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        config = ctx.config
        if config.citation_style is None:  # the spec's compose cites [doc_id]
            ctx.config = dataclasses.replace(config, citation_style="bracketed_ids")
            ctx.ids_for_model_only = True
        version = ctx.index_version
        if version is None:  # as rag.retrieval.search does: the routing profiles are cached per version
            version = selectors.index_version_get(tenant=ctx.tenant)
        # The request's filters bound every tool call and every probe of the planner.
        planner = get_planner(tenant=ctx.tenant, index_version=version, scope=config.filters)
        try:
            run = run_agent(
                question=ctx.search_query,
                tools=AgentTools(tenant=ctx.tenant, reader=ctx.reader, scope=config.filters),
                planner=planner,
                max_tool_calls=settings.RAG_AGENT_MAX_TOOL_CALLS,
                time_budget=settings.RAG_AGENT_TIME_BUDGET_SECONDS,
                evidence_limit=min(settings.RAG_AGENT_EVIDENCE_PASSAGES, config.context_passages),
            )
        finally:
            # The Claude planner's calls are model calls too, paid for even when a later one fails:
            # counted, with their tokens and cost, in the provenance and the audit row.
            ctx.generations.extend(getattr(planner, "generations", ()))
        ctx.agent = run
        ctx.note(
            self.name,
            planner=run.planner,
            intent=run.decomposition.intent,
            tool_calls=run.tool_calls,
            evidence=len(run.evidence),
            pruned=run.pruned,
            stopped=run.stopped,
        )
        if run.clarification is not None:
            ctx.not_found_reason = "clarify"
            ctx.halt("clarify")
            return ctx
        ctx.retrieval = RetrievalResult(
            passages=[item.passage for item in run.evidence],
            routing=_routing(ctx, version),
            mode="agentic",
            candidates=sum(len(step.get("result", {}).get("hits", [])) for step in run.steps),
            reranker="none",
        )
        return ctx


def _routing(ctx: QueryContext, index_version: int) -> Routing:
    """The agent routes by its own tools; what the answer needs is the document the question names
    (the answerability gate judges that document's passages, and its clauses) or else whether
    the question may mean several documents in scope (rag.retrieval.ambiguity), to answer for each
    and name them. A question that names its document (by parties, say) is not ambiguous."""
    named = route(
        tenant=ctx.tenant, query=ctx.search_query, index_version=index_version, filters=ctx.config.filters
    )
    if named.documents:
        return named
    return with_ambiguity(ctx.tenant, Routing("", ctx.search_query), ctx.config.filters)
