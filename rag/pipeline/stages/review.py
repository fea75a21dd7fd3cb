"""Stage 4a: a question about every document in scope is answered by checking every document
(rag.review), not from the top passages of the whole scope.

- A summary of one chosen document ("Summarize this agreement", "What are the key terms?"): its key
  terms (rag.review.summary), each quoted from the passage that states it, and the clause types
  checked and not found.
- A list question ("Which of these agreements contain a non-compete?") over two or more documents:
  each document is judged for the clause type; the evidence of each that holds it becomes the
  context, one passage per document, and the search stages are skipped. None holds it: "None of
  the 25 documents checked holds a non-compete clause." (not the generic "not found").
- A question about one chosen document naming a clause type: where the review finds the clause,
  search answers as usual (it finds the part of the clause the question asks about), the
  paragraphs the review read the clause in are quoted after it (`clause_evidence`; not for a
  question asking a value), and a yes/no question's answer opens with "Yes." ("Does this agreement
  contain a non-compete?"); where the review finds it clearly absent and the cross-encoder agrees
  that the document's best paragraph for it does not answer the question, "No: <title> does not
  contain a non-compete clause." (or, for "What insurance must the distributor carry?", "<title>
  does not contain an insurance requirement.").
- A question naming one document among those in scope (`named_document`) is judged the same way,
  except that a question about what a clause the review did not find says is left to search.
"""

from __future__ import annotations

import dataclasses

from rag import selectors
from rag.answers.asked import asked_value, asks_permission
from rag.models import Chunk, Document
from rag.retrieval import service as retrieval
from rag.retrieval.hits import Hit
from rag.retrieval.rerank import get_reranker
from rag.retrieval.routing import DOCUMENT_WORD, Routing, resolve_name, tokens
from rag.review import classify
from rag.review.columns import RESTRICTIONS
from rag.review.questions import CLAUSE, LIST, PRESENCE, SUMMARY, matter_question, summarized_name
from rag.review.summary import key_terms
from tenants.selectors import owned_list

from ..context import QueryContext
from ..routed import question_routing

MAX_LISTED = 50  # documents a list answer quotes; past that it points to the review table
CONTEXT_CHARS = 300  # of each document's passage, around its answer window
# "No, it has none" needs two judgements: the review's, and the cross-encoder's that the document's
# best paragraph for the clause does not answer the question as asked. A false "No" is the worst
# answer a lawyer can get; where they disagree, search answers (quoting what it finds).
DOUBT_NO_AT = 0.5
NO_BELOW = 0.15  # and the review's probability must be this low (its threshold is 0.3 today)


class MatterReviewStage:
    name = "matter_review"
    critical = True
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        filters = ctx.config.filters
        chosen = len(filters.document_ids) == 1
        named = None if chosen else named_document(ctx)
        # "Can King sublicense the trademarks under the King licence?": the clause types read the
        # question without the words that named its document.
        question = named.generic_question if named is not None else ctx.search_query or ""
        asked = matter_question(question, one_document=chosen or named is not None)
        if asked is None:
            return ctx
        if asked.kind == SUMMARY:
            document_id = summarized_document(ctx)
            return self._summarized(ctx, document_id) if document_id is not None else ctx
        if asked.kind != LIST and not chosen:
            # A question naming one document is reviewed in it, as if it were chosen: a yes/no
            # question opens "Yes."/"No: …"; what a clause says is still answered by search, the
            # clause the review reads quoted after it where search did not quote it.
            if named is None:
                return ctx
            filters = dataclasses.replace(filters, document_ids=(named.documents[0].document_id,))
        review = classify.review(tenant=ctx.tenant, filters=filters, column=asked.column)
        ctx.note(
            self.name,
            kind=asked.kind,
            column=asked.column.key,
            checked=len(review.verdicts),
            present=len(review.present),
            unreadable=len(review.unchecked.pending),
            withheld=review.unchecked.withheld,
            model=review.model,
        )
        if review.model == "none":
            return ctx
        if asked.kind == LIST and len(review.verdicts) >= 2:
            return self._listed(ctx, review)
        if asked.kind != LIST and len(review.verdicts) == 1:
            return self._one(ctx, review, asked.kind, question, chosen=chosen)
        return ctx

    def _summarized(self, ctx: QueryContext, document_id: int) -> QueryContext:
        filters = dataclasses.replace(ctx.config.filters, document_ids=(document_id,))
        terms = key_terms(tenant=ctx.tenant, filters=filters, reader=ctx.reader, document_id=document_id)
        ctx.note(self.name, kind=SUMMARY, found=len(terms.found), absent=len(terms.absent))
        if not terms.found:
            return ctx  # nothing to quote: search answers as asked
        ctx.review = terms
        chosen = [(Hit(t.chunk_id, t.document_id, 1.0), t.window) for t in terms.found]
        ctx.retrieval = retrieval.chosen_passages(
            tenant=ctx.tenant,
            question=ctx.search_query,
            chosen=chosen,
            reader=ctx.reader,
            context_chars=CONTEXT_CHARS,
        )
        return ctx

    def _listed(self, ctx: QueryContext, review: classify.Review) -> QueryContext:
        ctx.review = review
        present = review.present[:MAX_LISTED]
        if not present:
            return halt_unanswered(ctx, ctx.search_query, "not_in_documents", none_holds(review))
        chosen = [(Hit(v.chunk_id, v.document_id, v.probability), v.window) for v in present]
        ctx.retrieval = retrieval.chosen_passages(
            tenant=ctx.tenant,
            question=review.column.question,
            chosen=chosen,
            reader=ctx.reader,
            context_chars=CONTEXT_CHARS,
        )
        return ctx

    def _one(
        self, ctx: QueryContext, review: classify.Review, kind: str, question: str, *, chosen: bool
    ) -> QueryContext:
        """`question` as the clause types read it (without the words naming its document);
        `chosen`: the scope chose the document (else the question named it)."""
        verdict = review.verdicts[0]
        if kind == CLAUSE and not (chosen or verdict.present):
            return ctx  # named, not found: search answers from the scope as asked
        if verdict.present:
            # Search finds the clause the question asks about (its own words: "and with how much
            # notice?"); a yes/no question's answer opens with the review's "Yes.".
            if kind == CLAUSE:
                if asked_value(question) is None:  # "What audit rights …?", not "When …?"
                    ctx.clause_evidence = _evidence(verdict)
                return ctx
            ctx.clause_probability = verdict.probability
            if review.column.key in RESTRICTIONS and asks_permission(question):
                ctx.restricted = review.column.noun  # "Can it be assigned without consent?": "No: …"
            else:
                ctx.affirmed = review.column.noun
            ctx.clause_evidence = _evidence(verdict)
            return ctx
        if review.model != "clause-model":
            return ctx  # the cross-encoder alone is not enough to say "No"
        title = (
            owned_list(Document, tenant=ctx.tenant)
            .filter(pk=verdict.document_id)
            .values_list("title", flat=True)
            .first()
        ) or "the document"
        if verdict.probability >= NO_BELOW or _answers_it(ctx, verdict):
            # Not surely absent: say what the review found, and let search quote the nearest
            # passage for the reader to check (a bare quote would read as the clause).
            ctx.doubted = doubted_opening(question, kind, review.column, title)
            ctx.clause_evidence = _evidence(verdict)  # its best paragraph: the nearest to the clause
            return ctx
        opening = "No: " if kind != CLAUSE else ""
        message = f"{opening}{title} does not contain {review.column.noun}. Every passage of it was checked."
        return halt_unanswered(ctx, ctx.search_query, "not_in_documents", message)


def doubted_opening(question: str, kind: str, column, title: str) -> str:
    """The first sentence of an answer about `title` whose clause (`column`) the review did not
    find, short of a sure "No": "Probably not: a non-compete clause was not found in Alpha
    Agreement (every passage was checked)." A question that is no plain yes/no (what the clause
    says, or whether a restricted act is allowed) gets the finding without "Probably not"."""
    noun = column.noun[0].upper() + column.noun[1:]
    finding = f"{noun} was not found in {title} (every passage was checked)."
    plain_yes_no = kind == PRESENCE and not (column.key in RESTRICTIONS and asks_permission(question))
    return f"Probably not: {finding[0].lower()}{finding[1:]}" if plain_yes_no else finding


def named_document(ctx: QueryContext) -> Routing | None:
    """How search routes the question when it names exactly one document the reader may see in
    scope ("Is the Hydraspin distributorship exclusive?"), else None: nothing named, several
    routed, or a reference by kind that fits several documents (ambiguous)."""
    routing = question_routing(ctx)
    return routing if len(routing.documents) == 1 and not routing.ambiguous else None


def summarized_document(ctx: QueryContext) -> int | None:
    """The document a summary question is about: the one the scope chooses, or the one the question
    names among those in scope the reader may see ("Summarize the Hydraspin supply agreement");
    None when neither says which (search answers it)."""
    filters = ctx.config.filters
    if len(filters.document_ids) == 1:
        return filters.document_ids[0]
    name = summarized_name(ctx.search_query or "")
    if not name:
        return None
    version = ctx.index_version
    if version is None:
        version = selectors.index_version_get(tenant=ctx.tenant)
    match = resolve_name(tenant=ctx.tenant, name=name, index_version=version, filters=filters)
    if match.document is None:
        return None
    # Name matching weighs words; a summary must not answer "the Omega distribution agreement" with
    # the firm's only other distribution agreement: every word of the name that is no kind of
    # document must be in the document.
    document_id = match.document.document_id
    text = (
        owned_list(Document, tenant=ctx.tenant).filter(pk=document_id).values_list("text", flat=True).first()
    )
    named = [word for word in tokens(name) if not DOCUMENT_WORD.fullmatch(word)]
    return document_id if text and all(word in text.lower() for word in named) else None


def _evidence(verdict: classify.Verdict) -> list:
    """The paragraphs the review read the clause in, best first: (chunk id, document id, window)."""
    found = [(verdict.chunk_id, verdict.window), *verdict.more]
    return [(chunk_id, verdict.document_id, window) for chunk_id, window in found if window is not None]


def _answers_it(ctx: QueryContext, verdict: classify.Verdict) -> bool:
    """Whether the cross-encoder reads the document's best paragraph for the clause as answering
    the question (relevance DOUBT_NO_AT or more)."""
    reranker = get_reranker()
    if reranker is None or verdict.window is None or verdict.chunk_id is None:
        return False
    text = (
        owned_list(Chunk, tenant=ctx.tenant)
        .filter(pk=verdict.chunk_id)
        .values_list("text", flat=True)
        .first()
    )
    if not text:
        return False
    paragraph = text[verdict.window.start : verdict.window.end]
    return reranker.score(ctx.search_query, [paragraph])[0] >= DOUBT_NO_AT


def none_holds(review: classify.Review) -> str:
    """The answer to a list question no document qualifies for."""
    checked = len(review.verdicts)
    message = f"None of the {checked} documents checked contains {review.column.noun}."
    return " ".join(filter(None, (message, review.unchecked.sentence())))


def halt_unanswered(
    ctx: QueryContext, question: str, reason: str, message: str, *, mode: str = "review"
) -> QueryContext:
    """`ctx` ended with no passages, `reason` as its not_found_reason and `message` as what the
    reader is told (a review's "None of …" or "No: …", a comparison's unresolved name)."""
    ctx.retrieval = retrieval.RetrievalResult(
        passages=[], routing=Routing("", question or ""), mode=mode, candidates=0, reranker="none"
    )
    ctx.not_found_reason = reason
    ctx.not_found_message = message
    ctx.halt(reason)
    return ctx
