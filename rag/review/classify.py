"""Which documents in scope hold a clause: every document checked, none skipped.

For a clause type the model has a probe for (rag.review.model), each passage in scope gets its
probe score in one SQL query (an inner product with its stored embedding, inside the request's
filters and the reader's visibility); a document's best passages (PASSAGES_READ) are read by the
cross-encoder for the clause's question; the two give the document's probability. A document
whose best probe score is under the model's floor is a "No" without the cross-encoder (the floor
keeps ~97 % of held-out clauses), which keeps a 500-document matter within seconds.

A clause type without a probe (nothing to learn it from) is judged by the cross-encoder alone,
on the passages that use its evidence words.

Documents in scope that cannot be read yet (processing, failed) are counted, never named unless
the reader may see them; confidential documents the reader may not read and walled-off cases are
outside the filters altogether (SearchFilters.visibility), so they are neither checked nor counted.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from pgvector.django import MaxInnerProduct

from rag.models import Chunk, ClauseSignal, Document, DocumentStatus
from rag.retrieval.filters import SearchFilters
from rag.retrieval.rerank import WindowScore, get_reranker
from tenants.models import Tenant
from tenants.selectors import owned_list

from .columns import Column
from .model import ClauseModel, clause_model, window_logit

PASSAGES_READ = 4  # a document's best passages by probe score that the cross-encoder reads
WINDOWS_PER_PASSAGE = 4  # evidence paragraphs read per passage
MAX_WINDOW_CHARS = 700
_PARAGRAPH = re.compile(r"\S(?:.|\n(?![ \t]*\n))*")  # a run of non-blank lines
ZERO_SHOT_PRESENT = 0.5  # without a probe: the cross-encoder's relevance of the best window
ZERO_SHOT_PASSAGES = 4  # without a probe: passages read per document (those with evidence words)


@dataclass(frozen=True)
class Verdict:
    """One document's answer for one clause type, with the passage and window that show it."""

    document_id: int
    present: bool
    probability: float
    chunk_id: int | None = None
    window: WindowScore | None = None  # in the chunk's text


@dataclass(frozen=True)
class Review:
    column: Column
    verdicts: list[Verdict]  # every readable document in scope, in probability order
    unreadable: list[int]  # documents in scope not indexed (yet): processing, queued or failed
    model: str  # "probe+cross-encoder", "cross-encoder" (no probe) or "none" (no cross-encoder)

    @property
    def present(self) -> list[Verdict]:
        return [verdict for verdict in self.verdicts if verdict.present]


def evidence_windows(column: Column, text: str) -> list[tuple[int, int]]:
    """The paragraphs of `text` that use the clause's evidence words, as spans (a paragraph longer
    than MAX_WINDOW_CHARS is read in parts cut at sentence ends), at most WINDOWS_PER_PASSAGE."""
    spans = []
    for paragraph in _PARAGRAPH.finditer(text):
        start, end = paragraph.start(), paragraph.end()
        while end - start > MAX_WINDOW_CHARS:
            cut = text.rfind(". ", start, start + MAX_WINDOW_CHARS)
            cut = cut + 1 if cut > start + 100 else start + MAX_WINDOW_CHARS
            spans.append((start, cut))
            start = cut + len(text[cut:end]) - len(text[cut:end].lstrip())
        if end - start > 20:
            spans.append((start, end))
    return [(s, e) for s, e in spans if column.has_evidence(text[s:e])][:WINDOWS_PER_PASSAGE]


def window_scores(reranker, column: Column, texts: Sequence[str]) -> list[WindowScore | None]:
    """Each text's best evidence window (evidence_windows) for the clause, as the cross-encoder
    scores it against the clause's typical wording (None: no window uses its words)."""
    spans = [evidence_windows(column, text) for text in texts]
    windows = [
        " ".join(text[s:e].split()) for text, found in zip(texts, spans, strict=True) for s, e in found
    ]
    distinct = list(dict.fromkeys(windows))
    scored = dict(zip(distinct, reranker.score(column.statement, distinct), strict=True)) if distinct else {}
    best: list[WindowScore | None] = []
    for text, found in zip(texts, spans, strict=True):
        candidates = [WindowScore(scored[" ".join(text[s:e].split())], s, e) for s, e in found]
        best.append(max(candidates, key=lambda w: w.score, default=None))
    return best


def review(*, tenant: Tenant, filters: SearchFilters, column: Column) -> Review:
    """Every document `filters` let through (they carry the reader's visibility), judged for
    `column`."""
    reranker = get_reranker()
    model = clause_model()
    probe = model.probes.get(column.key) if model is not None else None
    if reranker is None:
        verdicts, used = [], "none"
    elif probe is not None:
        verdicts, used = _with_probe(tenant, filters, column, model, reranker), "probe+cross-encoder"
    else:
        verdicts, used = _zero_shot(tenant, filters, column, reranker), "cross-encoder"
    checked = {verdict.document_id for verdict in verdicts}
    return Review(column, verdicts, _unreadable(tenant, filters, checked), used)


def _with_probe(tenant, filters, column: Column, model: ClauseModel, reranker) -> list[Verdict]:
    probe = model.probes[column.key]
    rows = (
        owned_list(Chunk, tenant=tenant)
        .filter(filters.as_q(), embedding_model=model.embedding_model)
        .annotate(negative=MaxInnerProduct("embedding", probe.weights.tolist()))
        .values_list("pk", "document_id", "negative")
    )
    best: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for chunk_id, document_id, negative in rows:
        best[document_id].append((-negative + probe.bias, chunk_id))
    stored = _stored(tenant, column, model, list(best))
    verdicts, read = [], {}
    for document_id, scored in best.items():
        scored.sort(reverse=True)
        if scored[0][0] < model.candidate_floor:
            verdicts.append(Verdict(document_id, False, model.probability(scored[0][0], -10.0)))
        elif document_id in stored:
            verdicts.append(_verdict(model, document_id, scored[0][0], *stored[document_id]))
        else:
            read[document_id] = scored
    found = _best_windows(tenant, column, reranker, read)
    _store(tenant, column, model, {d: (read[d][0][0], *found[d]) for d in found})
    verdicts += [_verdict(model, d, read[d][0][0], *found[d]) for d in found]
    return sorted(verdicts, key=lambda v: -v.probability)


def _verdict(model: ClauseModel, document_id: int, score: float, chunk_id: int, window) -> Verdict:
    probability = model.probability(score, window_logit(window and window.score))
    return Verdict(document_id, probability >= model.threshold, probability, chunk_id, window)


def _best_windows(tenant, column: Column, reranker, read: dict) -> dict[int, tuple[int, WindowScore | None]]:
    """{document id: (chunk id, best window)} among each document's PASSAGES_READ best passages."""
    pairs = [(document_id, chunk_id) for document_id, s in read.items() for _, chunk_id in s[:PASSAGES_READ]]
    texts = _texts(tenant, [chunk_id for _, chunk_id in pairs])
    pairs = [(document_id, chunk_id) for document_id, chunk_id in pairs if chunk_id in texts]
    windows = window_scores(reranker, column, [texts[chunk_id] for _, chunk_id in pairs])
    found: dict[int, tuple[int, WindowScore | None]] = {}
    for (document_id, chunk_id), window in zip(pairs, windows, strict=True):
        held = found.get(document_id)
        if held is None or (window is not None and (held[1] is None or window.score > held[1].score)):
            found[document_id] = (chunk_id, window)
    return found


def _stored(tenant, column: Column, model: ClauseModel, document_ids: list[int]) -> dict:
    """{document id: (chunk id, window)} kept from an earlier review by this model version. A
    reindex deletes the document's chunks and, with them, its signals."""
    rows = (
        owned_list(ClauseSignal, tenant=tenant)
        .filter(column=column.key, model=model.version, document_id__in=document_ids)
        .values_list("document_id", "chunk_id", "chunk__char_start", "relevance", "char_start", "char_end")
    )
    return {
        document_id: (
            chunk_id,
            None if relevance is None else WindowScore(relevance, start - chunk_start, end - chunk_start),
        )
        for document_id, chunk_id, chunk_start, relevance, start, end in rows
    }


def _store(tenant, column: Column, model: ClauseModel, found: dict) -> None:
    """Keep each document's best window for this clause type (one row per document and type)."""
    if not found:
        return
    starts = dict(
        owned_list(Chunk, tenant=tenant)
        .filter(pk__in=[v[1] for v in found.values()])
        .values_list("pk", "char_start")
    )
    rows = [
        ClauseSignal(
            tenant=tenant,
            document_id=document_id,
            chunk_id=chunk_id,
            column=column.key,
            score=score,
            relevance=window.score if window is not None else None,
            char_start=starts[chunk_id] + (window.start if window is not None else 0),
            char_end=starts[chunk_id] + (window.end if window is not None else 0),
            model=model.version,
        )
        for document_id, (score, chunk_id, window) in found.items()
        if chunk_id in starts
    ]
    with transaction.atomic():
        owned_list(ClauseSignal, tenant=tenant).filter(
            column=column.key, document_id__in=list(found)
        ).delete()
        ClauseSignal.objects.bulk_create(rows, ignore_conflicts=True)


def _zero_shot(tenant, filters, column: Column, reranker) -> list[Verdict]:
    rows = owned_list(Chunk, tenant=tenant).filter(filters.as_q()).values_list("pk", "document_id", "text")
    documents: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for chunk_id, document_id, text in rows.order_by("document_id", "index"):
        documents.setdefault(document_id, [])
        if column.has_evidence(text) and len(documents[document_id]) < ZERO_SHOT_PASSAGES:
            documents[document_id].append((chunk_id, text))
    pairs = [(document_id, chunk_id, text) for document_id, cs in documents.items() for chunk_id, text in cs]
    windows = window_scores(reranker, column, [text for _, _, text in pairs])
    found: dict[int, tuple[int, WindowScore]] = {}
    for (document_id, chunk_id, _), window in zip(pairs, windows, strict=True):
        if window is not None and (document_id not in found or window.score > found[document_id][1].score):
            found[document_id] = (chunk_id, window)
    verdicts = []
    for document_id in documents:
        chunk_id, window = found.get(document_id, (None, None))
        score = window.score if window is not None else 0.0
        verdicts.append(Verdict(document_id, score >= ZERO_SHOT_PRESENT, score, chunk_id, window))
    return sorted(verdicts, key=lambda v: -v.probability)


def _texts(tenant: Tenant, chunk_ids: list[int]) -> dict[int, str]:
    return dict(owned_list(Chunk, tenant=tenant).filter(pk__in=chunk_ids).values_list("pk", "text"))


def _unreadable(tenant: Tenant, filters: SearchFilters, checked: set[int]) -> list[int]:
    """Documents the filters' case or document ids name that have no passage to check yet (the
    reader's visibility applies: a hidden document is not counted)."""
    if not (filters.case_ids or filters.document_ids):
        return []
    scope = Q()
    if filters.case_ids:
        scope &= Q(case_id__in=filters.case_ids)
    if filters.document_ids:
        scope &= Q(pk__in=filters.document_ids)
    visibility = filters.visibility
    documents = owned_list(Document, tenant=tenant).filter(scope).exclude(status=DocumentStatus.READY)
    if visibility is not None:
        documents = documents.filter(visibility.as_document_q())
    return sorted(set(documents.values_list("pk", flat=True)) - checked)
