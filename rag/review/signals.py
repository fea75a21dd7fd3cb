"""A document's clause signals: for each clause type the model has a probe for, the paragraph
that reads most like that clause (and the next MORE_EVIDENCE, where the clause goes on or is
qualified elsewhere), computed once per document (rag.models.ClauseSignal).

Each paragraph of the document (a run of non-blank lines; a long one read in parts cut at
sentence ends) is read as the words it uses (rag.review.lexicon), and each probe scores the
paragraphs that use its clause's evidence words. A paragraph is the clause's natural unit: a
1,000-character passage mixes it with its neighbours, and a short contract's only passage mixes
it with everything else, so its score falls.

Computed after a document is indexed (rag.ingest, in the worker) and when a review finds a
document without signals of the current model (`ensure`); `manage.py review_signals` computes
them for a whole tenant after the model changes. A reindex deletes the document's passages and,
with them, its signals.
"""

from __future__ import annotations

import logging
import re

import numpy as np
from django.db import transaction

from rag.models import Chunk, ClauseSignal, Document
from tenants.selectors import owned_list

from . import verifier
from .columns import BY_KEY
from .model import ClauseModel, clause_model

logger = logging.getLogger(__name__)

MAX_PARAGRAPH_CHARS = 700
MORE_EVIDENCE = 2  # further evidence paragraphs kept per clause type, after the best
NO_EVIDENCE = -99.0  # the score of a clause type whose words the document never uses
_PARAGRAPH = re.compile(r"\S(?:.|\n(?![ \t]*\n))*")  # a run of non-blank lines
MAX_HEADING_CHARS = 60  # a paragraph this short, mostly capitals or numbered, is a section heading
_NUMBERED = re.compile(r"(?:(?:article|section)\s+)?[0-9IVX]+(?:\.\d+)*\.?\s", re.I)


def paragraphs(text: str) -> list[tuple[int, int]]:
    """The paragraphs of `text` as spans; one longer than MAX_PARAGRAPH_CHARS is cut at sentence
    ends (or at that length) into parts."""
    spans = []
    for paragraph in _PARAGRAPH.finditer(text):
        start, end = paragraph.start(), paragraph.end()
        while end - start > MAX_PARAGRAPH_CHARS:
            cut = text.rfind(". ", start, start + MAX_PARAGRAPH_CHARS)
            cut = cut + 1 if cut > start + 100 else start + MAX_PARAGRAPH_CHARS
            spans.append((start, cut))
            start = cut + len(text[cut:end]) - len(text[cut:end].lstrip())
        if end - start > 20:
            spans.append((start, end))
    return spans


def _is_heading(paragraph: str) -> bool:
    words = " ".join(paragraph.split())
    if not 3 <= len(words) <= MAX_HEADING_CHARS or words[-1] in ".;:,":
        return False
    letters = [c for c in words if c.isalpha()]
    capitals = sum(c.isupper() for c in letters)
    return bool(letters) and (capitals * 2 >= len(letters) or bool(_NUMBERED.match(words)))


def reading_texts(text: str, spans) -> list[str]:
    """Each paragraph of `spans` as the review reads it: after the heading of its section where
    that heading stands on its own ("42.0 NON-COMPETITION" over "… shall not enter into an
    agreement with any other Party to provide services similar …": the body never names the
    clause)."""
    headings = [
        (m.start(), " ".join(m.group().split())) for m in _PARAGRAPH.finditer(text) if _is_heading(m.group())
    ]
    texts, current, next_heading = [], "", 0
    for start, end in spans:
        while next_heading < len(headings) and headings[next_heading][0] < start:
            current = headings[next_heading][1]
            next_heading += 1
        own = text[start:end]
        heading_itself = next_heading < len(headings) and headings[next_heading][0] == start
        texts.append(own if heading_itself or not current else f"{current}\n{own}")
    return texts


def best_paragraph(column, scores: np.ndarray, texts, spans) -> tuple[float, int, int]:
    """(probe score, start, end) of the paragraph among `spans` (read as `texts`, scored `scores`
    by the column's probe) that uses the clause's evidence words and scores best;
    (NO_EVIDENCE, 0, 0) when none uses them."""
    ranked = best_paragraphs(column, scores, texts, spans, 1)
    return ranked[0] if ranked else (NO_EVIDENCE, 0, 0)


def best_paragraphs(column, scores: np.ndarray, texts, spans, count: int) -> list[tuple[float, int, int]]:
    """The `count` paragraphs among `spans` (read as `texts`, scored `scores`) that use the
    clause's evidence words and score best, best first, as (probe score, start, end): a clause
    often runs over several paragraphs, or is stated in one place and qualified in another."""
    usable = [i for i, paragraph in enumerate(texts) if column.has_evidence(paragraph)]
    if not usable:
        return []
    order = np.argsort(-scores[usable], kind="stable")[:count]
    return [(float(scores[usable[i]]), *spans[usable[i]]) for i in order]


def compute(document: Document, model: ClauseModel | None = None) -> int:
    """(Re)compute `document`'s signals for every probe of the clause model; returns how many rows
    were written (0 without a model or without passages)."""
    model = model or clause_model()
    if model is None:
        return 0
    chunks = list(
        owned_list(Chunk, tenant=document.tenant)
        .filter(document=document)
        .order_by("char_start")
        .values_list("pk", "char_start", "char_end")
    )
    if not chunks:
        return 0
    text = document.text
    spans = paragraphs(text)
    texts = reading_texts(text, spans)
    keys = sorted(model.probes)
    scores = model.paragraph_scores(keys, texts)
    rows = []
    for column, key in enumerate(keys):
        ranked = best_paragraphs(BY_KEY[key], scores[:, column], texts, spans, 1 + MORE_EVIDENCE)
        score, start, end = ranked[0] if ranked else (NO_EVIDENCE, 0, 0)
        rows.append(
            ClauseSignal(
                tenant=document.tenant,
                document=document,
                chunk_id=_chunk_of(chunks, start, end),
                column=key,
                score=score,
                char_start=start,
                char_end=end,
                more=[[_chunk_of(chunks, s, e), s, e, round(x, 4)] for x, s, e in ranked[1:]],
                model=model.version,
            )
        )
    with transaction.atomic():
        ClauseSignal.objects.filter(tenant=document.tenant, document=document).delete()
        ClauseSignal.objects.bulk_create(rows)
        verifier.queue(document)  # when a language model reads the unsure verdicts
    return len(rows)


def compute_quietly(document: Document) -> None:
    """`compute`, logging instead of raising: a document is indexed whether or not its signals
    are (a review computes missing ones when it needs them)."""
    try:
        compute(document)
    except Exception:
        logger.exception("clause signals failed", extra={"document_id": document.pk})


def ensure(tenant, document_ids, model: ClauseModel) -> None:
    """Compute the signals of those of `document_ids` that have none of `model`'s version."""
    current = set(
        owned_list(ClauseSignal, tenant=tenant)
        .filter(document_id__in=list(document_ids), model=model.version)
        .values_list("document_id", flat=True)
        .distinct()
    )
    for document in owned_list(Document, tenant=tenant).filter(pk__in=set(document_ids) - current):
        compute(document, model)


def _chunk_of(chunks: list[tuple[int, int, int]], start: int, end: int) -> int:
    """The passage holding most of the paragraph `start`..`end` (passages overlap; the first such)."""
    return max(chunks, key=lambda chunk: min(end, chunk[2]) - max(start, chunk[1]))[0]
