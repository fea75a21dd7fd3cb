"""Which documents in scope hold a clause: every document checked, none skipped.

For a clause type the clause model has a probe for (rag.review.model), each document's verdict is
read from its clause signal (rag.review.signals: the probe's score of its best evidence
paragraph, computed once per document): one query for a matter of any size, inside the request's
filters and the reader's visibility. Documents without signals of the current model get them
computed first.

A clause type without a probe (nothing to learn it from) is judged by the cross-encoder alone,
on the paragraphs that use its evidence words, compared with the clause's typical wording.

Documents in scope the review could not check are said (rag.review.unchecked): those not indexed
yet (queued, processing, failed) by name, confidential ones the reader may not read only counted;
those and walled-off cases are outside the filters altogether (SearchFilters.visibility), so
nothing of them is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag.models import Chunk, ClauseSignal
from rag.retrieval.filters import SearchFilters
from rag.retrieval.rerank import WindowScore, get_reranker
from tenants.models import Tenant
from tenants.selectors import owned_list

from . import signals, unchecked, verifier
from .columns import Column
from .model import ClauseModel, clause_model

WINDOWS_PER_PASSAGE = 4  # evidence paragraphs read per passage (without a probe)
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
    # Further paragraphs that read as the clause (the probe's next best, as likely as a present
    # document's best): (chunk id, window in the chunk's text), best first.
    more: tuple[tuple[int, WindowScore], ...] = ()


@dataclass(frozen=True)
class Review:
    column: Column
    verdicts: list[Verdict]  # every readable document in scope, in probability order
    unchecked: unchecked.Unchecked  # documents in scope it could not check (not indexed, confidential)
    model: str  # "clause-model" (signals), "cross-encoder" (no probe) or "none" (neither)

    @property
    def present(self) -> list[Verdict]:
        return [verdict for verdict in self.verdicts if verdict.present]


def evidence_windows(column: Column, text: str) -> list[tuple[int, int]]:
    """The paragraphs of `text` that use the clause's evidence words, as spans, at most
    WINDOWS_PER_PASSAGE."""
    found = [(s, e) for s, e in signals.paragraphs(text) if column.has_evidence(text[s:e])]
    return found[:WINDOWS_PER_PASSAGE]


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
    model = clause_model()
    if model is not None and column.key in model.probes:
        verdicts, used = _from_signals(tenant, filters, [column], model)[column.key], "clause-model"
    elif (reranker := get_reranker()) is not None:
        verdicts, used = _zero_shot(tenant, filters, column, reranker), "cross-encoder"
    else:
        verdicts, used = [], "none"
    checked = {verdict.document_id for verdict in verdicts}
    return Review(column, verdicts, unchecked.in_scope(tenant, filters, checked), used)


def probed_verdicts(*, tenant: Tenant, filters: SearchFilters, columns: Sequence[Column]) -> dict[str, list]:
    """{column key: verdicts} of every document `filters` let through for each of `columns` the
    clause model has a probe for, read in one query (a summary judges one document for all of
    them); {} without a model."""
    model = clause_model()
    if model is None:
        return {}
    return _from_signals(tenant, filters, [c for c in columns if c.key in model.probes], model)


def _from_signals(tenant, filters, columns: Sequence[Column], model: ClauseModel) -> dict[str, list[Verdict]]:
    """Each column's verdicts read from the documents' clause signals (computed now for any
    without), best first."""
    in_scope = set(
        owned_list(Chunk, tenant=tenant)
        .filter(filters.as_q())
        .values_list("document_id", flat=True)
        .distinct()
    )
    signals.ensure(tenant, in_scope, model)
    rows = list(
        owned_list(ClauseSignal, tenant=tenant)
        .filter(column__in=[c.key for c in columns], model=model.version, document_id__in=in_scope)
        .values_list(
            "column",
            "document_id",
            "chunk_id",
            "chunk__char_start",
            "chunk__char_end",
            "score",
            "char_start",
            "char_end",
            "more",
            "verdict",
        )
    )
    bounds = _passage_bounds(tenant, {c for *_, more, _ in rows for c, *_ in more or ()})
    verdicts: dict[str, list[Verdict]] = {column.key: [] for column in columns}
    for key, document_id, chunk_id, chunk_start, chunk_end, score, start, end, more, read in rows:
        probability = _verified(model.probability(score), read)
        window = None
        if score > signals.NO_EVIDENCE:
            window = _window(probability, (start, end), (chunk_start, chunk_end))
        further = tuple(
            (c, _window(model.probability(x), (s, e), bounds[c]))
            for c, s, e, x in more or ()
            if c in bounds and model.probability(x) >= model.threshold
        )
        verdicts[key].append(
            Verdict(document_id, probability >= model.threshold, probability, chunk_id, window, further)
        )
    return {key: sorted(found, key=lambda v: -v.probability) for key, found in verdicts.items()}


def _verified(probability: float, verdict: str) -> float:
    """The probe's probability where a language model read the evidence (rag.review.verifier):
    sure where it confirmed the clause, below the floor of doubt where it rejected it."""
    if verdict == verifier.PRESENT:
        return max(probability, verifier.CONFIRMED)
    if verdict == verifier.ABSENT:
        return min(probability, verifier.REJECTED)
    return probability


def _passage_bounds(tenant, chunk_ids: set[int]) -> dict[int, tuple[int, int]]:
    """Each passage's (char_start, char_end) in its document."""
    if not chunk_ids:
        return {}
    rows = (
        owned_list(Chunk, tenant=tenant).filter(pk__in=chunk_ids).values_list("pk", "char_start", "char_end")
    )
    return {pk: (start, end) for pk, start, end in rows}


def _window(probability: float, paragraph: tuple[int, int], passage: tuple[int, int]) -> WindowScore:
    """The paragraph (document offsets) as a window in its passage's text, cut to the passage."""
    chunk_start, chunk_end = passage
    start, end = max(paragraph[0], chunk_start), min(paragraph[1], chunk_end)
    return WindowScore(probability, start - chunk_start, end - chunk_start)


def _zero_shot(tenant, filters, column: Column, reranker) -> list[Verdict]:
    rows = owned_list(Chunk, tenant=tenant).filter(filters.as_q()).values_list("pk", "document_id", "text")
    documents: dict[int, list[tuple[int, str]]] = {}  # every document in scope, even without evidence
    for chunk_id, document_id, text in rows.order_by("document_id", "index"):
        read = documents.setdefault(document_id, [])
        if column.has_evidence(text) and len(read) < ZERO_SHOT_PASSAGES:
            read.append((chunk_id, text))
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
