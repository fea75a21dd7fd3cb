"""Stage 10: call the model provider (RAG_LLM_PROVIDER) with the built prompt; when the answer is
streamed (`ctx.stream`), take the reply as the model writes it (rag.pipeline.streaming)."""

from __future__ import annotations

from collections.abc import Generator

from rag.llm import get_provider
from rag.llm.base import Generation, GenerationRequest, Source, generate_streamed
from templates_admin.rendering import RenderedPrompt

from ..context import QueryContext
from ..numbering import StreamedNumbers, numbered_for_reader
from ..postprocess import resolve
from ..review_prompt import comparison, listing
from ..streaming import GenerationStarted, answer_deltas


def call_model(
    ctx: QueryContext,
    prompt: RenderedPrompt,
    *,
    question: str | None = None,
    sources: tuple[Source, ...] = (),
) -> Generation:
    """One model call for `prompt`, recorded in `ctx.generations`: by default the answer to the
    question over the whole context (with the reasoning steps' findings, if any); a reasoning step
    passes its sub-`question` and its own `sources`.
    Raises `LLMUnavailable` (503), `GenerationTimeout` (504) or `ConfigurationError` (503)."""
    generation = get_provider().generate(_request(ctx, prompt, question=question, sources=sources))
    ctx.generations.append(generation)
    return generation


def _request(
    ctx: QueryContext,
    prompt: RenderedPrompt,
    *,
    question: str | None = None,
    sources: tuple[Source, ...] = (),
) -> GenerationRequest:
    step = question is not None
    reasoning = ctx.reasoning
    return GenerationRequest(
        system=prompt.system,
        prompt=prompt.user,
        question=question if step else ctx.search_query,
        sources=sources if step else ctx.context.sources,
        temperature=ctx.config.temperature,
        max_tokens=ctx.config.max_new_tokens,
        follow_up_count=prompt.follow_up_count,
        response_style=ctx.config.response_style or ctx.template.response_style,
        strictness=prompt.strictness,
        citation_style=prompt.citation_style,
        findings=reasoning.findings() if reasoning and not step else (),
        each_document=_each_document(ctx) if not step else (),
        listing=listing(ctx) if not step else None,
        affirmed=(ctx.affirmed or "") if not step else "",
        restricted=(ctx.restricted or "") if not step else "",
        doubted=(ctx.doubted or "") if not step else "",
        evidence=_evidence(ctx) if not step else (),
        evidence_confidence=ctx.clause_probability if ctx.from_evidence and not step else None,
        comparison=comparison(ctx) if not step else None,
        sources_attached=prompt.sources_attached,
        flagged=ctx.context.injection_flagged if prompt.sources_attached else (),
    )


class GenerateStage:
    name = "generate"
    critical = True
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        return self._noted(ctx, call_model(ctx, ctx.prompt))

    def stream(self, ctx: QueryContext) -> Generator[object, None, QueryContext]:
        """`run`, yielding `GenerationStarted` and then the answer's text as `AnswerDelta`s as the
        provider writes it; the generation is recorded once the reply is complete."""
        yield GenerationStarted()
        chunks = generate_streamed(get_provider(), _request(ctx, ctx.prompt))
        generation = yield from answer_deltas(chunks, _streamed_numbers(ctx))
        ctx.generations.append(generation)
        return self._noted(ctx, generation)

    def _noted(self, ctx: QueryContext, generation: Generation) -> QueryContext:
        ctx.note(
            self.name,
            provider=generation.provider,
            model=generation.model,
            input_tokens=generation.input_tokens,
            output_tokens=generation.output_tokens,
            cost_estimate=generation.cost_estimate,
            latency_ms=generation.latency_ms,
        )
        return ctx


def _each_document(ctx: QueryContext) -> tuple[int, ...]:
    """The documents an ambiguous question may mean (none when it is not ambiguous)."""
    routing = ctx.retrieval.routing if ctx.retrieval else None
    return tuple(d.document_id for d in routing.ambiguous) if routing else ()


def _evidence(ctx: QueryContext) -> tuple[str, ...]:
    """The citation ids of the passages a clause review added as its evidence (stages.evidence)."""
    added = {id(passage) for passage in ctx.evidence_passages}  # these objects, not equal ones
    return tuple(e.source.citation_id for e in ctx.context.entries if id(e.passage) in added)


def _streamed_numbers(ctx: QueryContext) -> StreamedNumbers | None:
    """The draft's citation markers numbered as the result's will be, where they are renumbered."""
    if not numbered_for_reader(ctx) or ctx.context is None:
        return None
    sources = [entry.source for entry in ctx.context.entries]

    def context_id(token: str) -> str | None:
        source = resolve(token, sources)
        return source.citation_id if source is not None else None

    return StreamedNumbers(context_id)
