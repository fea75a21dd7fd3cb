"""Stages 11-12: post-process the model's reply, then check it for hallucinations and mitigate.

Mitigations, in the spec's order, when a check fails (rag.pipeline.verify):
1. **re-run**: ask again with the strict prompt and a note on what was wrong, up to
   RAG_MAX_RETRIES_ON_HALLUCINATION times; the reply with the fewest problems is kept.
2. **removed**: citations naming no source, and citations whose quote is not in their source,
   are stripped from the answer; a sentence quoting a planted instruction goes with its citation.
3. **disclaimer**: what could not be verified is said in the disclaimer; `needs_verification`.

Then the answer is "I don't know" (answer None) when the model said so, when no valid citation
is left, or when its confidence is under MIN_CONFIDENCE_THRESHOLD.
"""

from __future__ import annotations

import dataclasses
import logging

from django.conf import settings

from rag.llm import Generation

from ..context import QueryContext
from ..follow_ups import generic_follow_ups
from ..postprocess import MARKER, ProcessedAnswer, marker_tokens, process
from ..verify import Verification, cited_sentences, verify
from .generate import call_model
from .prompt import build_prompt

logger = logging.getLogger("rag.query")

RERUN_NOTE = (
    "\n\nIMPORTANT: a previous answer to this question cited sources that do not exist, misquoted "
    "them, or made claims they do not support. Answer again using ONLY the sources above, quote "
    "them exactly, and cite EVERY claim with the source's citation token."
)
UNVERIFIED_DISCLAIMER = "Parts of this answer could not be verified against the cited sources; check them."
UNSTATED_VALUE_DISCLAIMER = (
    "A date, amount, rate or governing law this answer states is not written in the passages it cites; "
    "check it against the document."
)
LOGGED_OUTPUT_CHARS = 2000  # of the model's reply in the NoCitationsFound warning
UNSTATED_VALUE_CONFIDENCE = 0.5  # at most, for an answer stating a value its sources do not give


class PostProcessStage:
    name = "postprocess"
    critical = True
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        ctx.processed = _process(ctx, ctx.generation)
        ctx.note(
            self.name,
            output_format=ctx.processed.output_format,
            truncated=ctx.processed.truncated,
            citations=len(ctx.processed.citations),
            invalid_citations=list(ctx.processed.invalid_citations),
            confidence=ctx.processed.confidence,
        )
        return ctx


def _process(ctx: QueryContext, generation: Generation) -> ProcessedAnswer:
    processed = process(
        generation.text,
        ctx.context.sources,
        follow_up_count=ctx.follow_up_count,
        truncated=generation.truncated,
    )
    processed.follow_ups = _topped_up(processed, ctx.follow_up_count, ctx.search_query)
    return processed


def _topped_up(processed: ProcessedAnswer, count: int, question: str) -> list[str]:
    """Exactly `count` follow-ups: the model's, then ones on the question's topic in the first
    cited document (`question` as searched, so a follow-up's carried-over clause type counts)."""
    follow_ups = list(processed.follow_ups[:count])
    title = processed.citations[0].source.title if processed.citations else "the documents"
    for suggestion in generic_follow_ups(question, title):
        if len(follow_ups) >= count:
            break
        if suggestion not in follow_ups:
            follow_ups.append(suggestion)
    return follow_ups


def problems(verification: Verification) -> int:
    return len(verification.invalid_citations) + len(verification.misquoted) + len(verification.unsupported)


def _better(processed, verification, current, current_verification) -> bool:
    """Whether a re-run's answer replaces the current one: fewer problems, and it still cites
    something when the current one does (an uncited reply would turn into "I don't know")."""
    if current.citations and not processed.citations:
        return False
    return problems(verification) < problems(current_verification)


class VerifyStage:
    name = "verify"
    critical = True  # an answer is never returned unchecked
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        sources = ctx.context.sources
        ctx.verification = ctx.first_verification = verify(ctx.processed, sources)
        detected_first = ctx.verification.hallucination_detected
        retries = 0
        while ctx.verification.hallucination_detected and retries < settings.RAG_MAX_RETRIES_ON_HALLUCINATION:
            retries += 1
            prompt = build_prompt(ctx, strictness="strict")
            generation = call_model(ctx, dataclasses.replace(prompt, user=prompt.user + RERUN_NOTE))
            processed = _process(ctx, generation)
            verification = verify(processed, sources)
            if _better(processed, verification, ctx.processed, ctx.verification):
                ctx.processed, ctx.verification = processed, verification
        if retries:
            ctx.mitigation.append("re-run")
        if ctx.verification.hallucination_detected:
            _remove_bad_citations(ctx)
            ctx.mitigation.append("disclaimer")
            ctx.processed.disclaimer = " ".join(
                filter(None, [UNVERIFIED_DISCLAIMER, ctx.processed.disclaimer])
            )
        if ctx.verification.unstated_values and ctx.processed.answer:
            # A value its sources do not give is not shown as sure, and the reader is told to check it.
            ctx.processed.confidence = min(confidence_of(ctx), UNSTATED_VALUE_CONFIDENCE)
            ctx.processed.disclaimer = " ".join(
                filter(None, [UNSTATED_VALUE_DISCLAIMER, ctx.processed.disclaimer])
            )
        ctx.not_found_reason = _not_found_reason(ctx)
        if ctx.not_found_reason == "no_valid_citations":
            _warn_no_citations(ctx)
        ctx.note(
            self.name,
            hallucination_detected=detected_first,
            still_detected=ctx.verification.hallucination_detected,
            retries=retries,
            invalid_citations=list(ctx.verification.invalid_citations),
            misquoted=list(ctx.verification.misquoted),
            unsupported=list(ctx.verification.unsupported),
            unstated_values=len(ctx.verification.unstated_values),
            mitigation=list(ctx.mitigation),
            not_found_reason=ctx.not_found_reason,
        )
        return ctx


def _warn_no_citations(ctx: QueryContext) -> None:
    """The spec's NoCitationsFound: the model answered without a valid citation, so the reader gets
    "I don't know". Logged as a warning with the request id and the model's reply (capped), to find
    out why (the question's text is never logged)."""
    generation = ctx.generation
    output = generation.text if generation else ""
    logger.warning(
        "NoCitationsFound: the model's answer has no valid citation; answered as not found",
        extra={
            "event": "no_citations_found",
            "request_id": ctx.request_id,
            "tenant_id": ctx.tenant.pk,
            "model_provider": generation.provider if generation else None,
            "model": generation.model if generation else None,
            "llm_output": output[:LOGGED_OUTPUT_CHARS],
            "llm_output_truncated": len(output) > LOGGED_OUTPUT_CHARS,
            "invalid_citations": list(ctx.verification.invalid_citations),
            "mitigation": list(ctx.mitigation),
        },
    )


def _remove_bad_citations(ctx: QueryContext) -> None:
    processed, verification = ctx.processed, ctx.verification
    bad = set(verification.invalid_citations) | set(verification.misquoted)
    if not bad:
        return
    processed.citations = [c for c in processed.citations if c.token not in bad]
    if processed.answer and verification.quoted_instructions:
        processed.answer = without_sentences_citing(processed.answer, set(verification.quoted_instructions))
    if processed.answer:
        processed.answer = strip_citations(processed.answer, bad)
    ctx.mitigation.append("removed")


def without_sentences_citing(answer: str, tokens: set[str]) -> str:
    """`answer` without its sentences citing `tokens`: a planted instruction a model quoted is not
    repeated to the reader, even with its citation removed (issue #33)."""
    starts, position = [], 0
    for sentence, cited in cited_sentences(answer):
        start = answer.find(sentence, position)
        if start < 0:  # cannot be placed: the citation is gone already, the words are left
            return answer
        starts.append((start, cited))
        position = start + len(sentence)
    # Each sentence runs to the next one's start, so the markers after it go (or stay) with it.
    ends = [start for start, _ in starts[1:]] + [len(answer)]
    kept = [
        answer[start:end] for (start, cited), end in zip(starts, ends, strict=True) if not tokens & set(cited)
    ]
    return (answer[: starts[0][0]] if starts else "") + "".join(kept).strip()


def strip_citations(answer: str, tokens: set[str]) -> str:
    """`answer` without the citation markers of `tokens` ("[1, 9]" → "[1]" when 9 is removed)."""

    def keep(match) -> str:
        found = marker_tokens(match.group(0))
        kept = [token for token in found if token not in tokens]
        if len(kept) == len(found):
            return match.group(0)
        return f"[{', '.join(kept)}]" if kept else ""

    stripped = MARKER.sub(keep, answer)
    # Line by line: a table's rows (a comparison, rag.llm.compare) and a list's items stay on theirs.
    lines = (" ".join(line.split()).replace(" .", ".").replace(" ,", ",") for line in stripped.split("\n"))
    return "\n".join(lines).strip()


def _not_found_reason(ctx: QueryContext) -> str | None:
    processed = ctx.processed
    if processed.answer is None:
        return "model_did_not_know"
    if not processed.citations:
        return "no_valid_citations"
    if confidence_of(ctx) < settings.MIN_CONFIDENCE_THRESHOLD:
        return "low_confidence"
    return None


def confidence_of(ctx: QueryContext) -> float:
    """The model's confidence, else the mean relevance of the passages it cites."""
    processed = ctx.processed
    if processed.confidence is not None:
        return processed.confidence
    cited = [c.source.similarity_score for c in processed.citations]
    return round(sum(cited) / len(cited), 4) if cited else 0.0
