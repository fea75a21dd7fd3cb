"""The query result in the orchestration spec's response shape (plus the fields a legal reader
needs to open the cited passage: document id, page range, character offsets, chunk id).

    {"answer", "message", "citations": [{citation_id, doc_id, document_id, title, source, snippet,
     page, page_end, similarity_score, rank_score, date, chunk_id, char_start, char_end}],
     "follow_up_questions", "confidence_score", "disclaimer", "flags": {...},
     "provenance": {...}, "request_id", "timestamp"}

`answer` is None ("I don't know") with `message` NOT_FOUND_MESSAGE; otherwise `message` is None.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from django.utils import timezone

from rag.llm.base import configured_model
from rag.retrieval.ambiguity import MAX_CANDIDATES

from . import numbering
from .context import QueryContext
from .context_builder import ContextEntry
from .stages.answer import confidence_of
from .stages.prompt import prompt_tokens

NOT_FOUND_MESSAGE = "Information not found in the knowledge base."
# The stages whose time is "search" wherever it is reported (provenance `retrieval_latency_ms` and
# `timing.search_ms`, the log line's `latency.search_ms`, `rag_search_latency_seconds`): finding the
# passages, by a matter review or a comparison, an ambiguous question's candidates each searched
# alone, the plain pipeline's steps or agentic mode's loop,
# chain of thought's searches, the passages that date the document (rag.answers) and those a clause
# review adds as its evidence.
SEARCH_STAGES = (
    "matter_review", "compare", "each_candidate", "retrieve", "rank", "rerank", "agent", "reasoning_search",
    "document_dates", "clause_evidence",
)  # fmt: skip
BUILD_STAGES = ("build_context", "build_prompt")  # the log line's `build_ms`


def timestamp() -> str:
    return timezone.now().isoformat(timespec="seconds").replace("+00:00", "Z")


def answer_result(ctx: QueryContext) -> dict:
    """The result of a run that reached an answer or "I don't know"."""
    processed = ctx.processed
    not_found = ctx.not_found_reason is not None
    entries = {entry.source.citation_id: entry for entry in ctx.context.entries} if ctx.context else {}
    citations = []
    if not not_found:
        seen = set()
        for citation in processed.citations:
            if citation.source.citation_id in seen:
                continue
            seen.add(citation.source.citation_id)
            citations.append(_citation(entries[citation.source.citation_id], citation.snippet))
    answer = None if not_found else processed.answer
    shown: dict[str, str] = {}
    if answer is not None and numbering.numbered_for_reader(ctx):
        token_ids = {token: token for token in entries} | {
            c.token: c.source.citation_id for c in processed.citations
        }
        shown = numbering.numbers(answer, token_ids, [c["citation_id"] for c in citations], list(entries))
        answer = numbering.renumbered(answer, token_ids, shown)
        for citation in citations:
            citation["citation_id"] = shown[citation["citation_id"]]
        citations.sort(key=lambda c: int(c["citation_id"]))
    clarification = ctx.agent.clarification if ctx.agent else None
    ambiguous = ambiguity_clarification(ctx)
    result = {
        "answer": answer,
        "message": _not_found_message(ctx, clarification, ambiguous) if not_found else None,
        "citations": citations,
        "follow_up_questions": [] if not_found else list(processed.follow_ups),
        "confidence_score": 0.0 if not_found else confidence_of(ctx),
        "disclaimer": "" if not_found else processed.disclaimer,
        "flags": flags(ctx),
        "provenance": provenance(ctx, used={c["document_id"] for c in citations}),
        "request_id": ctx.request_id,
        "timestamp": timestamp(),
    }
    if ctx.agent is not None or ambiguous:
        result["clarification"] = clarification.as_dict() if clarification else ambiguous
    if ctx.agent is not None:  # agentic mode: what the agent decided, searched and kept
        result["agent"] = ctx.agent.as_dict()
    if ctx.reasoning is not None:  # chain of thought: the sub-questions (and steps, on request)
        result["reasoning"] = ctx.reasoning.as_dict(show_steps=ctx.config.show_cot_steps)
        if shown:
            _renumber_steps(result["reasoning"], shown)
    return result


def _renumber_steps(reasoning: dict, shown: dict[str, str]) -> None:
    """Each chain-of-thought step's answer, citations and sources in the answer's numbers."""
    identity = {token: token for token in shown}
    for step in reasoning.get("steps", ()):
        if step["intermediate_answer"]:
            step["intermediate_answer"] = numbering.renumbered(step["intermediate_answer"], identity, shown)
        step["citations"] = [shown.get(token, token) for token in step["citations"]]
        step["sources"] = [shown.get(token, token) for token in step["sources"]]


def _not_found_message(ctx: QueryContext, clarification, ambiguous: dict | None) -> str:
    if ctx.not_found_message:  # e.g. which clause the document asked about lacks
        return ctx.not_found_message
    if ctx.doubted:  # the review did not find the clause either
        return ctx.doubted
    if clarification is not None:
        return clarification.message
    return ambiguous["message"] if ambiguous else NOT_FOUND_MESSAGE


def ambiguity_clarification(ctx: QueryContext) -> dict | None:
    """When the question may mean several documents (rag.retrieval.ambiguity): which, by title, so
    the user can pick one. The answer, if any, quotes each of them."""
    routing = ctx.retrieval.routing if ctx.retrieval else None
    if routing is None or not routing.ambiguous:
        return None
    titles = [d.title for d in routing.ambiguous]
    if len(titles) > MAX_CANDIDATES:
        shown = ", ".join(f'"{title}"' for title in titles[:MAX_CANDIDATES]) + " and others"
        message = f"The question fits several documents ({shown}). Which one do you mean?"
    else:
        shown = ", ".join(f'"{title}"' for title in titles[:-1]) + f' and "{titles[-1]}"'
        message = (
            f"The question fits {len(titles)} documents: {shown}. Each is answered; pick one to ask "
            "about it alone."
        )
    return {
        "type": "ambiguous",
        "missing_info": "which document",
        "message": message,
        "candidates": [{"document_id": d.document_id, "title": d.title} for d in routing.ambiguous],
    }


def dry_run_result(ctx: QueryContext) -> dict:
    """What would be sent to the model, without calling it (the spec's simulation)."""
    provider, model = configured_model()
    entries = ctx.context.entries if ctx.context else ()
    prompt = ctx.prompt
    return {
        "dry_run": True,
        # The spec's strings (the prompt as the model reads it, the model's name); the parts beside.
        "generated_prompt": f"{prompt.system}\n\n{prompt.user}" if prompt else None,
        "generated_prompt_detail": {"system": prompt.system, "user": prompt.user} if prompt else None,
        "selected_snippets": [_citation(entry, "") for entry in entries],
        "estimated_tokens": prompt_tokens(prompt) if prompt else 0,
        "context_tokens": ctx.context.tokens if ctx.context else 0,
        "would_use_model": model,
        "would_use_model_detail": {"provider": provider, "model": model},
        # Whether the question would be answered or "not found" (rag.pipeline.answerability).
        "answerability": ctx.stage_metadata.get("build_context", {}).get("answerability"),
        "would_answer": ctx.stage_metadata.get("build_context", {}).get("answerable"),
        # The clause the asked-about document never words, when that is why it would not be answered.
        "missing_clause": ctx.stage_metadata.get("build_context", {}).get("missing_clause"),
        "flags": flags(ctx),
        "provenance": provenance(ctx, used=set()),
        "request_id": ctx.request_id,
        "timestamp": timestamp(),
    } | ({"reasoning": ctx.reasoning.as_dict(show_steps=False)} if ctx.reasoning else {})


def refreshed_cached_result(ctx: QueryContext) -> dict:
    """A cached result re-stamped for this request."""
    result = dict(ctx.result)
    cached = result.get("provenance", {})
    result["flags"] = {**result.get("flags", {}), "cache_hit": True}
    result["provenance"] = {
        **cached,
        "cached_request_id": result.get("request_id"),
        "timing": {**_timing(ctx), "cached_total_ms": cached.get("timing", {}).get("total_ms")},
        # This request's stages (a cache lookup); those of the run that answered, as they were.
        "stages": stage_metadata(ctx),
        "cached_stages": cached.get("stages"),
    }
    result["request_id"] = ctx.request_id
    result["timestamp"] = timestamp()
    return result


def redactions_applied(ctx) -> bool:
    """Whether the request's scope held confidential documents its reader may not read."""
    visibility = ctx.config.filters.visibility
    return bool(visibility and visibility.withheld)


def flags(ctx: QueryContext) -> dict:
    first = ctx.first_verification
    detected = bool(first and first.hallucination_detected)
    sanitized = ctx.sanitized
    return {
        "hallucination_warning": detected,
        "hallucination_detected": detected,
        "invalid_citations": list(first.invalid_citations) if first else [],
        # The spec's one value: the last measure taken, the one the answer was left with (a re-run
        # that fixed it, or a disclaimer); every measure, in order, beside it.
        "mitigation_applied": ctx.mitigation[-1] if ctx.mitigation else None,
        "mitigations_applied": list(ctx.mitigation),
        # The answer as returned: a re-run that fixed every problem needs no verification.
        "needs_verification": bool(ctx.verification and ctx.verification.needs_verification),
        # The scope held confidential documents the reader may not read, left out of the search:
        # said whatever the question, so it never tells whether their text matched.
        "redactions_applied": redactions_applied(ctx),
        "cache_hit": ctx.cache_hit,
        "prompt_injection_detected": bool(sanitized and sanitized.prompt_injection_detected),
        "indirect_injection_detected": bool(ctx.context and ctx.context.injection_flagged),
        # The model's reply was cut off at max_new_tokens (only its complete sentences are shown).
        "token_warning": bool(ctx.processed and ctx.processed.truncated),
        # A remote image or a link outside the app was taken out of the model's text (#20).
        "answer_sanitized": bool(ctx.processed and ctx.processed.sanitized),
    }


def provenance(ctx: QueryContext, *, used: set[int]) -> dict:
    generations = ctx.generations
    last = ctx.generation
    retrieved = [p.document_id for p in ctx.retrieval.passages] if ctx.retrieval else []
    found = ctx.candidates
    template = ctx.template
    return {
        "index_version": ctx.index_version,
        "snapshot_id": _snapshot_id(ctx.index_version, ctx.indexed_at),
        "weights_version": ctx.weights_version,
        "retrieval_latency_ms": ctx.stage_ms(*SEARCH_STAGES),
        "model_provider": last.provider if last else None,
        "model": last.model if last else None,
        "model_calls": len(generations),
        "tokens_used": sum(g.tokens_used for g in generations),
        "input_tokens": sum(g.input_tokens for g in generations),
        "output_tokens": sum(g.output_tokens for g in generations),
        "cost_estimate": round(sum(g.cost_estimate for g in generations), 6),
        "template_id": template.template_id if template else None,
        "template_version": template.version if template else None,
        "response_style": template.response_style if template else None,
        "citation_style": ctx.citation_style,
        "strictness": ctx.strictness,
        "search_query": ctx.search_query,
        "search_mode": found.mode if found else None,
        "clause_types": list(found.clause_types) if found else [],
        "routed_reference": found.routing.reference if found else "",
        "reranker": ctx.ranked.reranker if ctx.ranked else None,
        "candidates": len(found.candidates) if found else 0,
        "docs_retrieved": len(retrieved),  # passages; the documents they come from are below
        "docs_used": len(used),
        # Passages retrieved but left out of the prompt: over RAG_TOKEN_BUDGET / token_budget.
        "passages_dropped": len(ctx.context.dropped_chunk_ids) if ctx.context else 0,
        "documents_retrieved": list(dict.fromkeys(retrieved)),
        "documents_used": sorted(used),
        "not_found_reason": ctx.not_found_reason,
        "verification": _verification(ctx),
        "timing": _timing(ctx),
        "stages": stage_metadata(ctx),
    }


def stage_metadata(ctx: QueryContext) -> dict:
    """What each stage so far noted (`QueryContext.note`), as plain JSON."""
    return json.loads(json.dumps(ctx.stage_metadata, default=_plain))


def _plain(value):
    """A value JSON cannot take as it is: a NumPy number as a Python one, anything else as text."""
    return value.item() if hasattr(value, "item") else str(value)


def _snapshot_id(version: int | None, indexed_at: datetime | None) -> str | None:
    if not version or not indexed_at:
        return None
    return f"snap_{indexed_at:%Y%m%d%H%M%S}_v{version}"


def _verification(ctx: QueryContext) -> dict | None:
    final = ctx.verification
    if final is None:
        return None
    return {
        "misquoted": list(final.misquoted),
        "unsupported": list(final.unsupported),
        "invalid_citations": list(final.invalid_citations),
        "retries": ctx.stage_metadata.get("verify", {}).get("retries", 0),
    }


def _timing(ctx: QueryContext) -> dict:
    return {
        "search_ms": ctx.stage_ms(*SEARCH_STAGES),
        "inference_ms": round(sum(g.latency_ms for g in ctx.generations), 2),
        "total_ms": ctx.total_ms,
        "stages": dict(ctx.timings),
    }


def _citation(entry: ContextEntry, quote: str) -> dict:
    passage = entry.passage
    snippet, start, end = passage.snippet, passage.snippet_start, passage.snippet_end
    located = _locate(quote, entry.source.text) if quote else None
    if located is not None:
        snippet = entry.source.text[located[0] : located[1]]
        start, end = passage.char_start + located[0], passage.char_start + located[1]
    return {
        "citation_id": entry.source.citation_id,
        "doc_id": f"doc_{passage.document_id}",
        "document_id": passage.document_id,
        "title": passage.title,
        "source": passage.source,
        "snippet": snippet,
        "page": passage.page_start,
        "page_end": passage.page_end,
        "similarity_score": round(passage.similarity_score, 4),
        "rank_score": round(passage.rank_score, 4),
        "date": passage.date.isoformat() if passage.date else None,
        "chunk_id": passage.chunk_id,
        "char_start": start,
        "char_end": end,
    }


def _locate(quote: str, text: str) -> tuple[int, int] | None:
    """Where `quote` occurs in `text`, whitespace-insensitively (case-insensitively as a fallback);
    an ellipsis opening or ending it marks where it was cut, not quoted words."""
    words = quote.strip().strip("…").removesuffix("...").removeprefix("...").split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(word) for word in words)
    match = re.search(pattern, text) or re.search(pattern, text, re.I)
    return (match.start(), match.end()) if match else None
