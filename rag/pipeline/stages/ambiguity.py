"""Stage 4c: a question that may mean several documents in scope ("What law governs the license
agreement?" in a case holding two licence agreements, rag.retrieval.ambiguity) is answered for each
of them from its own text, as if it had been asked of that document alone.

Each candidate (two to MAX_CANDIDATES) is searched inside its own document with the normal hybrid
retrieval and cross-encoder, its answerability judged as for a question about that one document
(rag.review.compare.own_passages, what a comparison searches each document with). One search over
the whole scope would rank the candidates' passages against each other: a candidate's passage would
be whatever of it survived that joint ranking (the recitals, the licence grant), not the clause the
same document gives when it is asked alone. A candidate whose text does not answer is not quoted.

The context is each candidate's best passage (by its answer window's score, as the answer to that
document alone leads with it), in the candidates' order, then each one's second (PASSAGES_PER_SIDE);
the routing names every candidate as ambiguous, so the answer quotes each one's best clause and the
result's clarification names them all by title (rag.pipeline.result.ambiguity_clarification). Like
a comparison, it sets `ctx.each_candidate` and the search stages (`searches = True`: the plain
retrieve → rank → rerank, agentic mode's loop) are skipped, in sync, streamed and agentic mode.

Not handled here (the search stages answer them as before): a question that names its document
(by parties, say), one whose kind fits one document only, and one fitting more than MAX_CANDIDATES
(the answer is the clarification alone).
"""

from __future__ import annotations

import math

from rag.retrieval import ambiguity
from rag.retrieval import service as retrieval
from rag.retrieval.routing import Routing
from rag.review.compare import PASSAGES_PER_SIDE, own_passages

from ..context import QueryContext
from ..routed import question_routing


class EachCandidateStage:
    name = "each_candidate"
    critical = True  # a failing search is VectorStoreUnavailable, as in the retrieve stage
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        if ctx.review is not None:
            return ctx  # a matter review or a comparison has answered it
        routing = ambiguous_routing(ctx)
        if routing is None:
            return ctx
        config = ctx.config
        found = [
            own_passages(
                tenant=ctx.tenant,
                document_id=candidate.document_id,
                question=ctx.search_query,
                filters=config.filters,
                reader=ctx.reader,
                mode=config.search_mode,
                reranking_enabled=config.reranking_enabled,
                # The passages the answer would choose among if the document were asked alone.
                max_chunks=config.context_passages,
            )
            for candidate in routing.ambiguous
        ]
        found = [_best_answers(each)[:PASSAGES_PER_SIDE] for each in found]
        passages = _interleaved(found)
        ctx.each_candidate = tuple(candidate.document_id for candidate in routing.ambiguous)
        reranker = retrieval.get_reranker()
        ctx.retrieval = retrieval.RetrievalResult(
            passages=passages,
            routing=routing,
            mode=config.search_mode,
            candidates=len(passages),
            reranker=reranker.name if reranker is not None and config.reranking_enabled else "none",
        )
        ctx.note(
            self.name,
            candidates=len(routing.ambiguous),
            answered=sum(1 for each in found if each),
            passages=len(passages),
        )
        return ctx


def ambiguous_routing(ctx: QueryContext) -> Routing | None:
    """The question's routing when it may mean two to MAX_CANDIDATES documents of the request's
    scope (`routing.ambiguous`, each one also routed), as rag.retrieval.service.search decides it;
    None otherwise. A question without a reference to a kind of document costs no query."""
    if not ambiguity.kind_words(ctx.search_query or ""):
        return None
    # A question naming its document (by parties, say) keeps its routing (with_ambiguity).
    routing = question_routing(ctx)
    return routing if len(routing.ambiguous) > 1 and routing.documents else None


def _best_answers(passages: tuple) -> list:
    """`passages` (one document's) by their answer window's cross-encoder score, best first, as
    the answer to a question about that document alone leads with its best window; in rank order
    without a cross-encoder."""
    return sorted(passages, key=lambda p: -p.answer_score if p.answer_score is not None else math.inf)


def _interleaved(found: list[tuple]) -> list:
    """Each candidate's first passage, in the candidates' order, then each one's second, and so on:
    a context cut short keeps every candidate's best."""
    longest = max((len(each) for each in found), default=0)
    return [each[n] for n in range(longest) for each in found if n < len(each)]
