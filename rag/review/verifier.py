"""A language model reads the clause verdicts the clause model is unsure of (`RAG_REVIEW_VERIFIER`:
`anthropic` for Claude, `ollama` for a model the firm runs itself).

The clause model (rag.review.model) scores a document's paragraphs by their words. Held out by
matter it names about two documents in three correctly and finds three in four of those that hold
the clause (bench/README.md): in the band between "surely absent" (VERIFY_FLOOR) and "sure"
(rag.review.model.SURE) it is right about as often as not. That band is where a reader is needed,
and what the review tables of Kira or Harvey give a language model: here the model reads, once per
document, each clause type in the band with its evidence paragraphs and the clause type's
definition, and records for each whether the paragraphs state such a clause and which one does
(Claude by a forced tool call, Ollama by a reply in the tool's JSON schema).

- **Once per document**, in the worker after its signals are computed (`rag.verify_clause_signals`,
  the ingestion queue), or for a whole firm with `manage.py review_signals --verify`; the verdicts
  are stored on the signals (`ClauseSignal.verdict`, `verified_by`), so lists and review tables
  read them like the probe's scores. Signals computed again (a reindex, a new clause model) lose
  their verdicts with their paragraphs and are verified again.
- **What it changes**: a clause the model confirms is present and sure (probability CONFIRMED: no
  "(check)" mark, no "needs review"), quoted from the paragraph it names; a clause it rejects is
  absent (REJECTED). It may only point at the paragraphs it was shown: a "present"
  without one of them is no verdict, and the probe's stands.
- **Data, not instructions**: the paragraphs are fenced like the answer prompt's sources (a random
  boundary per request, look-alike tags neutralised, rag.pipeline.context_builder); a planted
  instruction can at worst sway its own document's verdicts, which a reader sees quoted.
- **Failures** (timeouts, refusals, an unreadable reply) leave the probe's verdicts and are logged;
  `review_signals --verify` tries again.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging

from django.conf import settings
from django.db import transaction

from rag.models import ClauseSignal, Document
from rag.pipeline.context_builder import defused, new_boundary
from ragsite.exceptions import ApplicationError
from templates_admin.rendering import data_rule
from tenants.selectors import owned_list

from . import signals
from .columns import BY_KEY
from .model import SURE, ClauseModel, clause_model

logger = logging.getLogger(__name__)

READERS = ("anthropic", "ollama")  # RAG_REVIEW_VERIFIER's values besides "" (off)
PRESENT, ABSENT = "present", "absent"
VERIFY_FLOOR = 0.1  # below this probability the model's "absent" stands (held out, few are present)
# The probability a verdict the model read is given: a confirmed clause is listed without "(check)" and
# fills a table cell that needs no review (above SURE and fill.REVIEW_BELOW); a rejected one is a
# sure "No". Not measured here (no model API is reachable): a reader's verdict, not a certainty.
CONFIRMED, REJECTED = 0.9, 0.05
PARAGRAPH_CHARS = 2_000  # of each paragraph shown (they are cut at 700 characters, headings added)
MAX_TOKENS = 2_048  # the reply is one tool call with a short reason per clause type

TOOL = {
    "name": "record_clause_verdicts",
    "description": "Record, for each clause type asked about, whether the contract's paragraphs state it.",
    "input_schema": {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "clause": {"type": "string", "description": "the clause type's key, as given"},
                        "present": {"type": "boolean"},
                        "paragraph": {
                            "type": "integer",
                            "description": "the id of the paragraph that states the clause (0 if none)",
                        },
                        "reason": {"type": "string", "description": "one short sentence"},
                    },
                    "required": ["clause", "present", "paragraph"],
                },
            }
        },
        "required": ["verdicts"],
    },
}

SYSTEM = (
    "You review contracts for a law firm. For each clause type below you are given its definition "
    "and the ids of paragraphs of one contract, each in a source block, that a search found likely "
    "to hold it. Decide whether those paragraphs state a clause of that type as the definition "
    "describes it, and name the paragraph that states it. A clause that only mentions the subject "
    "(a non-exclusive licence under 'exclusivity', a termination for breach under 'termination for "
    "convenience') is not present."
)
REPLY = {
    "anthropic": "Call record_clause_verdicts once, with one verdict per clause type.",
    "ollama": 'Reply with one JSON object, {"verdicts": [...]}, with one verdict per clause type.',
}


def enabled() -> bool:
    return settings.RAG_REVIEW_VERIFIER in READERS


def pending(document: Document, model: ClauseModel) -> list[ClauseSignal]:
    """`document`'s signals of `model` that are unverified, with evidence, in the unsure band."""
    rows = owned_list(ClauseSignal, tenant=document.tenant).filter(
        document=document, model=model.version, verdict=""
    )
    return [
        row
        for row in rows.order_by("column")
        if row.column in BY_KEY
        and row.score > signals.NO_EVIDENCE
        and VERIFY_FLOOR <= model.probability(row.score) < SURE
    ]


def verify(document: Document, model: ClauseModel | None = None) -> int:
    """Ask the reader (RAG_REVIEW_VERIFIER) about `document`'s unsure clause verdicts (`pending`)
    and store its verdicts; returns how many were stored. Raises the provider's errors
    (`ApplicationError`: a timeout, an unreachable or refusing model, a reply not as asked)."""
    model = model or clause_model()
    if model is None:
        return 0
    rows = pending(document, model)
    if not rows:
        return 0
    numbered = _numbered_paragraphs(rows)
    boundary = new_boundary()
    reader, reply = _read(boundary, _content(document, rows, numbered, boundary))
    verdicts = _verdicts(reply, rows, numbered)
    with transaction.atomic():
        for row, (verdict, lead) in verdicts.items():
            row.verdict, row.verified_by = verdict, reader
            if lead is not None:
                _lead_with(row, lead)
        # Signals computed again meanwhile are other rows: these updates then touch nothing.
        ClauseSignal.objects.bulk_update(
            list(verdicts), ["verdict", "verified_by", "chunk", "char_start", "char_end", "score", "more"]
        )
    return len(verdicts)


def _read(boundary: str, content: str) -> tuple[str, dict]:
    """(the model's name, its verdicts as the tool's input) from the configured reader: Claude by a
    forced tool call, Ollama by structured outputs in the tool's schema. ConfigurationError without
    its key, host or model."""
    reader = settings.RAG_REVIEW_VERIFIER
    system = f"{SYSTEM} {REPLY[reader]} {data_rule(boundary)}"
    if reader == "ollama":
        from rag.llm.ollama import OllamaProvider

        ollama = OllamaProvider()
        schema = TOOL["input_schema"]
        return ollama.model, ollama.structured_output(
            system=system, prompt=content, schema=schema, max_tokens=MAX_TOKENS
        )
    from rag.llm.anthropic import AnthropicProvider

    claude = AnthropicProvider()
    return claude.model, claude.forced_tool_input(
        system=system, content=content, tool=TOOL, max_tokens=MAX_TOKENS
    )


def verify_quietly(document: Document) -> int:
    """`verify`, logging a provider failure instead of raising it (the probe's verdicts stand)."""
    try:
        return verify(document)
    except ApplicationError as exc:
        logger.warning(
            "clause verification failed: %s",
            exc.message,
            extra={"document_id": document.pk, "details": exc.details},
        )
        return 0


_NOT_QUEUED = contextvars.ContextVar("clause_verification_not_queued", default=False)


@contextlib.contextmanager
def not_queued():
    """Within it, `queue` queues nothing (the caller verifies the documents itself)."""
    token = _NOT_QUEUED.set(True)
    try:
        yield
    finally:
        _NOT_QUEUED.reset(token)


def queue(document: Document) -> None:
    """Verify `document`'s signals in the worker once the transaction that computed them commits
    (when RAG_REVIEW_VERIFIER is on)."""
    if not enabled() or _NOT_QUEUED.get():
        return
    from rag.tasks import verify_clause_signals

    document_id, tenant_id = document.pk, document.tenant_id
    transaction.on_commit(lambda: verify_clause_signals.delay(document_id, tenant_id))


def _candidates(row: ClauseSignal) -> list[tuple[int, int, int, float]]:
    """The signal's evidence paragraphs, best first: (chunk id, start, end, probe score)."""
    lead = (row.chunk_id, row.char_start, row.char_end, row.score)
    return [lead, *(tuple(entry) for entry in row.more or ())]


def _numbered_paragraphs(rows: list[ClauseSignal]) -> dict[tuple[int, int], int]:
    """Each distinct evidence paragraph (start, end) of `rows`, numbered from 1 in reading order."""
    spans = sorted({(start, end) for row in rows for _, start, end, _ in _candidates(row)})
    return {span: number for number, span in enumerate(spans, 1)}


def _content(document: Document, rows, numbered: dict, boundary: str) -> str:
    text = document.text
    parts = [f"Contract: {defused(document.title, boundary)}", ""]
    for row in rows:
        column = BY_KEY[row.column]
        shown = sorted({numbered[(start, end)] for _, start, end, _ in _candidates(row)})
        parts.append(
            f'Clause type "{row.column}" ({column.label}): {column.question} '
            f"Paragraphs to read (source ids): {', '.join(map(str, shown))}."
        )
    parts.append("")
    for (start, end), number in numbered.items():
        paragraph = defused(text[start:end][:PARAGRAPH_CHARS], boundary)
        parts.append(f'<source id="{number}" boundary="{boundary}">\n{paragraph}')
        parts.append(f'</source boundary="{boundary}">')
    return "\n".join(parts)


def _verdicts(reply: dict, rows: list[ClauseSignal], numbered: dict) -> dict:
    """{signal: (verdict, index of the paragraph to lead with or None)} from the model's reply (the
    tool's input); a verdict about a clause type not asked, or "present" without one of that type's
    paragraphs, is ignored."""
    by_column = {row.column: row for row in rows}
    found = {}
    for item in reply.get("verdicts") or []:
        if not isinstance(item, dict) or not isinstance(item.get("present"), bool):
            continue
        row = by_column.get(item.get("clause"))
        if row is None or row in found:
            continue
        if not item["present"]:
            found[row] = (ABSENT, None)
            continue
        spans = [numbered[(start, end)] for _, start, end, _ in _candidates(row)]
        paragraph = item.get("paragraph")
        if isinstance(paragraph, int) and not isinstance(paragraph, bool) and paragraph in spans:
            found[row] = (PRESENT, spans.index(paragraph))
    return found


def _lead_with(row: ClauseSignal, index: int) -> None:
    """Make the signal's `index`-th evidence paragraph its lead (the one quoted), keeping the others
    in order after it."""
    if index == 0:
        return
    ordered = _candidates(row)
    lead = ordered.pop(index)
    row.chunk_id, row.char_start, row.char_end, row.score = lead
    row.more = [list(entry) for entry in ordered]
