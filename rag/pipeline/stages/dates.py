"""Stage 6b: a question asking for a date gets the passages that date the document (and one asking
who the parties are, the preamble's sentence naming them).

"When was this agreement signed?", "When does it take effect?", "When does the term end?": the
answer is the date the preamble gives ("made as of June 24, 2020"), the date defined as the
Effective Date, or one computed from them ("five years from the Effective Date"). Search finds the
clause the question is about, not always the passage that dates the agreement; this stage adds
that passage (and the Effective Date's definition) of the answering document to the context, each
cut around its date, so the model — the offline one or a remote one — can state the date and cite
where it comes from (rag.answers). An added passage is never a search hit: it carries no answer
score of its own and is only quoted where the answer states its date.
"""

from __future__ import annotations

import dataclasses

from rag.answers.asked import DATE, EFFECTIVE, PARTIES, SIGNED, asked_value
from rag.answers.dates import anchors
from rag.answers.parties import parties_span
from rag.models import Chunk, Document
from rag.retrieval import service as retrieval
from rag.retrieval.hits import Hit
from rag.retrieval.rerank import WindowScore
from tenants.selectors import owned_list

from ..context import QueryContext
from .retrieve import found_passages

CONTEXT_CHARS = 300  # of an added passage, around its date
ADDED_SCORE = 0.0  # never a lead window, never quoted for its relevance


class DocumentDatesStage:
    name = "document_dates"
    searches = True  # skipped after a matter review (rag.review)
    critical = False  # without it the answer quotes what search found
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        asked = asked_value(ctx.search_query or ctx.question)
        if asked is None or asked.kind not in (DATE, PARTIES) or ctx.review is not None:
            return ctx
        passages = found_passages(ctx)
        if not passages:
            return ctx
        document = passages[0].document_id
        text = (
            owned_list(Document, tenant=ctx.tenant).filter(pk=document).values_list("text", flat=True).first()
        )
        if not text:
            return ctx
        if asked.kind == PARTIES:  # the preamble's sentence naming them
            span = parties_span(text)
            spans, dated = [span] if span else [], False
        else:
            dates = anchors(text)
            spans, dated = [(anchor.start, anchor.end) for anchor in dates.values()], bool(dates)
        # A passage already in the context counts only where its text holds the span: agentic
        # mode's evidence is cut around the window the agent searched for, not the preamble's date.
        have = [(p.char_start, p.char_end) for p in passages if p.document_id == document]
        added = _passages_holding(ctx, document, spans, have=have)
        ctx.dated = dated and asked.event in (SIGNED, EFFECTIVE)
        ctx.note(self.name, added=len(added), dated=ctx.dated)
        if added:
            ctx.retrieval = dataclasses.replace(ctx.retrieval, passages=[*passages, *added])
        return ctx


def _passages_holding(
    ctx: QueryContext, document: int, spans: list[tuple[int, int]], *, have: list[tuple[int, int]]
) -> list:
    """The passages of `document` holding each of `spans` (cut around it) that none of the spans
    `have` (the context's passages of it) holds already."""
    chosen, seen = [], set()
    for span_start, span_end in spans:
        if any(start <= span_start and span_end <= end for start, end in have):
            continue
        starting = list(
            owned_list(Chunk, tenant=ctx.tenant)
            .filter(document_id=document, char_start__lte=span_start, char_end__gt=span_start)
            .order_by("index")
            .only("pk", "char_start", "char_end")
        )  # overlapping chunks: the first holding the whole span, else the first holding its start
        chunk = next((c for c in starting if c.char_end >= span_end), starting[0] if starting else None)
        if chunk is None or chunk.pk in seen:
            continue
        seen.add(chunk.pk)
        end = min(span_end, chunk.char_end)
        window = WindowScore(ADDED_SCORE, span_start - chunk.char_start, end - chunk.char_start)
        chosen.append((Hit(chunk.pk, document, ADDED_SCORE), window))
    if not chosen:
        return []
    found = retrieval.chosen_passages(
        tenant=ctx.tenant,
        question=ctx.search_query or ctx.question,
        chosen=chosen,
        reader=ctx.reader,
        context_chars=CONTEXT_CHARS,
    )
    return found.passages
