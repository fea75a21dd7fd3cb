"""Stage 6c: a yes/no question whose clause the matter review found gets the review's evidence.

"Does this agreement contain a non-compete?": search finds the passage that best answers the
question's words, which is not always the clause itself (a definition, a recital, the clause's
exceptions). The review (rag.review) has read every paragraph of the document and kept the ones
that read most like the clause; this stage adds them to the context, each cut around its
paragraph (a passage search brought may be there already, answering with another of its parts),
so the answer can quote them after search's own quote ("Also on point: …"). The added passages
are never search hits: they carry no answer score of their own, so they never lead the answer.
"""

from __future__ import annotations

import dataclasses

from rag.retrieval import service as retrieval
from rag.retrieval.hits import Hit
from rag.retrieval.rerank import WindowScore

from ..context import QueryContext
from .retrieve import found_passages

CONTEXT_CHARS = 300  # of an added passage, around its paragraph
ADDED_SCORE = 0.0  # never a lead window, never quoted for its relevance


class ClauseEvidenceStage:
    name = "clause_evidence"
    searches = True  # skipped after a matter review of the whole scope (rag.review)
    critical = False  # without it the answer quotes what search found
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        if not ctx.clause_evidence or ctx.review is not None:
            return ctx
        passages = found_passages(ctx)
        if passages is None:
            return ctx
        chosen = {  # a passage search brought may be there already, answering with another part
            (chunk_id, window.start, window.end): (
                Hit(chunk_id, document_id, ADDED_SCORE),
                WindowScore(ADDED_SCORE, window.start, window.end),
            )
            for chunk_id, document_id, window in ctx.clause_evidence
        }
        added = []
        if chosen:
            added = retrieval.chosen_passages(
                tenant=ctx.tenant,
                question=ctx.search_query or ctx.question,
                chosen=list(chosen.values()),
                reader=ctx.reader,  # checked again: only what the reader may read is added
                context_chars=CONTEXT_CHARS,
            ).passages
        ctx.note(self.name, added=len(added))
        if added:
            ctx.retrieval = dataclasses.replace(ctx.retrieval, passages=[*passages, *added])
            ctx.evidence_passages = tuple(added)
        return ctx
