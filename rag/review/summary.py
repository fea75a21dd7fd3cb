"""A document's key terms: "Summarize this agreement" answered as one readable row of a review
table, each term with the passage that states it.

- The parties: the preamble's sentence naming them (rag.answers.parties).
- The value terms (dates, term and renewal, notice, termination, payment, governing law): the
  document's best answer window for each column's question, found by search inside the document
  (the pipeline's retrieval, cross-encoder included), when the cross-encoder reads it as answering
  (MIN_VALUE_SCORE); terms one sentence states share its entry.
- The clause types the clause model knows (assignment, termination for convenience, exclusivity,
  liability cap, insurance, …): the review's verdict from the document's clause signals, at a
  stricter bar than a list's (`rag.review.model.SURE`); each one found is quoted from its paragraph, the
  others are named as checked and not found.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rag.answers.parties import parties_span
from rag.models import Chunk, Document
from rag.retrieval import service as retrieval
from rag.retrieval.filters import SearchFilters
from rag.retrieval.rerank import WindowScore
from tenants.selectors import owned_list

from . import classify
from .columns import BY_KEY, PRESENCE_COLUMNS, VALUE, Column
from .model import SURE

MIN_VALUE_SCORE = 0.5  # a value's best window scoring under this is left out (nothing states it)
# Searched for, "the parties" finds boilerplate ("the entire agreement of the parties") before the
# preamble: the parties are read from the preamble itself (`_parties`).
VALUE_TERMS = (
    "agreement_date",
    "effective_date",
    "expiration_date",
    "renewal_term",
    "notice_to_terminate_renewal",
    "termination",
    "payment_terms",
    "governing_law",
)


@dataclass(frozen=True)
class Term:
    column: Column
    document_id: int
    chunk_id: int
    window: WindowScore | None
    also: tuple[Column, ...] = ()  # the other terms the same sentence states (`_merged`)

    @property
    def questions(self) -> tuple[str, ...]:
        """The questions of the value terms this entry states, in order (none for a clause type)."""
        return tuple(column.question for column in (self.column, *self.also) if column.kind == VALUE)


@dataclass(frozen=True)
class KeyTerms:
    document_id: int
    found: list[Term]  # value terms first, then the clause types found, in column order
    absent: list[Column]  # clause types checked and not found

    @property
    def labels(self) -> list[str]:
        return [term.column.label for term in self.found]


def key_terms(*, tenant, filters: SearchFilters, reader: retrieval.Reader, document_id: int) -> KeyTerms:
    """The key terms of the one document `filters` name (they carry the reader's visibility)."""
    found = [term for term in [_parties(tenant, filters, document_id)] if term]
    found += [term for key in VALUE_TERMS if (term := _value(tenant, filters, reader, BY_KEY[key]))]
    absent = []
    judged = classify.probed_verdicts(tenant=tenant, filters=filters, columns=PRESENCE_COLUMNS)
    for column in PRESENCE_COLUMNS:
        if column.key not in judged:
            continue
        verdict = next((v for v in judged[column.key] if v.document_id == document_id), None)
        # Named only when the review is fairly sure (a list, where a lawyer checks every hit, uses the
        # model's recall-minded threshold): a wrong term in a summary misleads.
        if verdict is not None and verdict.probability >= SURE and verdict.chunk_id is not None:
            found.append(Term(column, document_id, verdict.chunk_id, verdict.window))
        else:
            absent.append(column)
    return KeyTerms(document_id, _merged(found), absent)


def _merged(found: list[Term]) -> list[Term]:
    """The terms with one entry per quoted window: terms a single sentence states ("This Agreement
    commences on the Effective Date and continues for three (3) years") share its entry."""
    merged: dict[tuple, Term] = {}
    for term in found:
        key = (term.chunk_id, term.window.start if term.window else None)
        if key in merged:
            held = merged[key]
            label = f"{held.column.label} / {term.column.label}"
            merged[key] = Term(
                dataclasses.replace(held.column, label=label),
                held.document_id,
                held.chunk_id,
                held.window,
                (*held.also, term.column),
            )
        else:
            merged[key] = term
    return list(merged.values())


def _value(tenant, filters: SearchFilters, reader, column: Column) -> Term | None:
    result = retrieval.retrieve(
        tenant=tenant, query=column.question, filters=filters, reader=reader, top_k=1, routing_enabled=False
    )
    if not result.passages:
        return None
    passage = result.passages[0]
    if passage.answer_start is None or (passage.answer_score or 0.0) < MIN_VALUE_SCORE:
        return None
    chunk_start = (
        owned_list(Chunk, tenant=tenant)
        .filter(pk=passage.chunk_id)
        .values_list("char_start", flat=True)
        .first()
    )
    if chunk_start is None:
        return None
    start = max(passage.answer_start, chunk_start) - chunk_start
    window = WindowScore(passage.answer_score, start, passage.answer_end - chunk_start)
    return Term(column, passage.document_id, passage.chunk_id, window)


def _parties(tenant, filters: SearchFilters, document_id: int) -> Term | None:
    """The sentence of the document's preamble that names its parties, in the passage holding it
    (`filters` carry the reader's visibility: a document they may not read has none)."""
    visible = owned_list(Document, tenant=tenant).filter(pk=document_id)
    if filters.visibility is not None:
        visible = visible.filter(filters.visibility.as_document_q())
    text = visible.values_list("text", flat=True).first()
    span = parties_span(text) if text else None
    if span is None:
        return None
    chunk = (
        owned_list(Chunk, tenant=tenant)
        .filter(document_id=document_id, char_start__lte=span[0], char_end__gt=span[0])
        .order_by("index")
        .values_list("pk", "char_start", "char_end")
        .first()
    )
    if chunk is None:
        return None
    chunk_id, chunk_start, chunk_end = chunk
    window = WindowScore(1.0, span[0] - chunk_start, min(span[1], chunk_end) - chunk_start)
    return Term(BY_KEY["parties"], document_id, chunk_id, window)
