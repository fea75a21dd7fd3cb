"""Whether the retrieved passages answer the question at all: "not found" when the documents don't
say, instead of quoting the nearest clause.

Reranking chose each passage's best answer window reading the question together with the usual
wording of the clause type it names (rag.retrieval.legal_terms): that finds the right clause, but
it also scores any clause of that type, or worded like it, highly — the wording is in the query.
Whether a window really answers is judged on the question alone: the cross-encoder scores the
question proper (the document's name and kind left out, as for ranking) against the best
ANSWER_WINDOWS windows, and the best of those scores is the answerability. When the question
named its document (routing), only that document's windows count: another contract's clause does
not answer a question about this one.

The question alone misses clauses asked for in other words than theirs ("How can a party walk
away?" scores "The Parties may terminate ... on written notice" at 0.0001; "can we inspect his
records?" the records-and-inspection clause at 0.00004). So a window the reranker itself judged
relevant to the question read with its clause type's wording (`answer_score` at or above
CLAUSE_ANSWER_SCORE: logit 0, the model's own line between relevant and not) counts as an answer
too: the contract has a clause of the kind asked about, said the way such clauses are said. A
question whose clause the contract lacks finds at best a neighbouring clause, which the model
scores lower: on the natural-question dev set, 0.10 to 0.42 for the unanswerable questions the
question alone refused, 0.85 to 0.99 for the three answerable ones this lets through
(bench/README.md). Such a window settles it, so the question alone is then not scored at all and
the answerability is that window's score: most answerable questions cost no further model run.

Before that, a plainer test (`missing_clause`): a question about a clause that has a subject of its
own ("What insurance must Boyd carry under the Honey Hole sponsorship?") asked of one document
(named, or the only one in scope) whose text never uses the words such a clause is written with
(rag.retrieval.legal_terms.EVIDENCE: "insur…") is not answered from that document, whatever the
model makes of the nearest passage; the message says which clause is missing where. Confidential
documents are left out of this test: its message would tell what they do not say.

Under `RAG_MIN_ANSWERABILITY` the answer is "not found" (`not_found_reason: "not_in_documents"`),
for every provider, before the model is asked. The threshold is calibrated on the natural-question
dev set (bench/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from rag.models import Document, Sensitivity
from rag.retrieval import legal_terms
from rag.retrieval.filters import SearchFilters
from rag.retrieval.rerank import get_reranker
from rag.retrieval.routing import generic_reference
from rag.retrieval.service import Passage, RetrievalResult
from tenants.models import Tenant
from tenants.selectors import owned_list

ANSWER_WINDOWS = 3
CLAUSE_ANSWER_SCORE = 0.5


def answerability(result: RetrievalResult, question: str) -> float | None:
    """The cross-encoder's best score (0..1) of `question` against the answer windows of the best
    passages; None when nothing was reranked (no cross-encoder, or no readable window). When the
    reranker already scored one of those windows at CLAUSE_ANSWER_SCORE or more (and at least
    RAG_MIN_ANSWERABILITY), that score: it answers whatever the question alone would score, so the
    model is not asked again."""
    reranker = get_reranker()
    windows = [p for p in result.passages if _window(p)]
    routed = {d.document_id for d in result.routing.documents}
    named = [p for p in result.passages if p.document_id in routed]
    if named:
        windows = [p for p in windows if p.document_id in routed]
        if not windows:
            return 0.0  # the named document has nothing the reranker could read as an answer
    if reranker is None or not windows:
        return None
    proper = result.routing.generic_question or generic_reference(question)
    best = windows[:ANSWER_WINDOWS]
    worded = max(p.answer_score or 0.0 for p in best)
    if worded >= max(CLAUSE_ANSWER_SCORE, settings.RAG_MIN_ANSWERABILITY):
        return worded
    alone = max(reranker.score(proper, [_window(p) for p in best]))
    return max(alone, worded) if worded >= CLAUSE_ANSWER_SCORE else alone


def _window(passage: Passage) -> str:
    span = passage.answer_span
    return " ".join(passage.text[span[0] : span[1]].split()) if span else ""


@dataclass(frozen=True)
class MissingClause:
    """A clause the question asks about that its document cannot hold."""

    clause: str  # the clause type's name: "insurance"
    titles: tuple[str, ...]  # the document(s) asked about

    @property
    def message(self) -> str:
        named = " or ".join(f"\u201c{title}\u201d" for title in self.titles)
        return (
            f"No {self.clause} clause found in {named}: the document never uses the words such a "
            "clause is written with."
        )


def missing_clause(
    tenant: Tenant, result: RetrievalResult, question: str, filters: SearchFilters | None = None
) -> MissingClause | None:
    """The clause `question` asks about that the document it is about (the routed documents, or the
    only document in scope) cannot hold, or None (see the module docstring)."""
    documents = [d.document_id for d in result.routing.documents]
    if not documents and filters is not None and len(filters.document_ids or ()) == 1:
        documents = list(filters.document_ids)
    proper = result.routing.generic_question or generic_reference(question)
    if not documents or not legal_terms.evidence(proper):
        return None  # no document asked about, or no clause with words of its own: nothing to read
    rows = list(
        owned_list(Document, tenant=tenant)
        .filter(pk__in=documents)
        .values_list("title", "text", "sensitivity")
    )
    if not rows or any(sensitivity == Sensitivity.CONFIDENTIAL for _, _, sensitivity in rows):
        return None
    absent = legal_terms.absent_clauses(proper, [text for _, text, _ in rows])
    return MissingClause(absent[0].name, tuple(title for title, _, _ in rows)) if absent else None
