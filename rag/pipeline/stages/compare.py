"""Stage 4b: a comparison of documents ("Compare the termination rights in the Alpha and Beta
agreements") is answered side by side, each document from its own text (rag.review.compare).

Like the matter review stage before it, it sets `ctx.review` (here a `Comparison`): the search
stages (`searches = True`: the plain retrieve → rank → rerank, agentic mode's loop, chain of
thought's) are skipped, and the context is each document's best passages on the topic, grouped by
document. The answer is a table, one row per document (rag.llm.compare for the extractive
provider; a remote model is told so in the prompt, rag.pipeline.review_prompt.compare_block).

- A name that resolves to no document the reader may see in scope (missing, confidential and not
  theirs to read, behind a wall: all alike) ends the run with a message naming it
  (`not_found_reason` "clarify"); so does a name fitting several documents equally.
- No document holds anything on the topic: "No termination provision found in “A” or “B”."
- Anything else that is no comparison of two or more documents is left to search, unchanged; so
  is a comparison whose caller asked to see chain of thought's steps (`show_cot_steps` with
  `cot_enabled`): it is answered part by part, as that option promises (docs/reasoning.md).
"""

from __future__ import annotations

from rag import selectors
from rag.retrieval import service as retrieval
from rag.retrieval.routing import Routing
from rag.review.compare import compare as compare_documents
from rag.review.compare import comparison_asked

from ..context import QueryContext
from .review import halt_unanswered


class CompareStage:
    name = "compare"
    critical = True  # a failing search is VectorStoreUnavailable, as in the retrieve stage
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        if ctx.review is not None:
            return ctx  # a matter review has answered it
        config = ctx.config
        asked = comparison_asked(ctx.search_query or "", config.filters)
        if asked is None:
            return ctx
        if config.cot_enabled and config.show_cot_steps:
            # The caller asked to see the comparison answered part by part (chain of thought).
            ctx.note(self.name, used=False, reason="cot_steps_asked")
            return ctx
        version = ctx.index_version
        if version is None:
            version = selectors.index_version_get(tenant=ctx.tenant)
        comparison = compare_documents(
            tenant=ctx.tenant,
            asked=asked,
            filters=config.filters,
            reader=ctx.reader,
            index_version=version,
            mode=config.search_mode,
            reranking_enabled=config.reranking_enabled,
        )
        if comparison is None:
            ctx.note(self.name, used=False, named=len(asked.names))
            return ctx
        ctx.review = comparison
        ctx.note(
            self.name,
            used=True,
            named=len(asked.names),
            documents=len(comparison.sides),
            found=len(comparison.found),
            unresolved=len(comparison.unresolved) + len(comparison.ambiguous),
        )
        question = asked.question
        if comparison.problem:
            return halt_unanswered(ctx, question, "clarify", comparison.problem, mode="compare")
        if not comparison.found:
            return halt_unanswered(
                ctx, question, "not_in_documents", comparison.nothing_found, mode="compare"
            )
        passages = [passage for side in comparison.sides for passage in side.passages]
        reranker = retrieval.get_reranker()
        ctx.retrieval = retrieval.RetrievalResult(
            passages=passages,
            routing=Routing("", question),
            mode="compare",
            candidates=len(passages),
            reranker=reranker.name if reranker is not None and config.reranking_enabled else "none",
        )
        return ctx
