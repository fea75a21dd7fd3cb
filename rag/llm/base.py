"""What every model provider takes and returns, and how one is chosen (`RAG_LLM_PROVIDER`).

A provider turns a built prompt into text. It never sees the database: the pipeline hands it the
prompt and the sources the prompt was built from (the offline extractive provider answers from those
directly). Failures are typed: `GenerationTimeout` (504) when the model is too slow,
`LLMUnavailable` (503) when it cannot be reached or refuses, `ConfigurationError` (503) when the
provider is misconfigured (no API key, unknown provider).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from django.conf import settings

from ragsite.exceptions import ConfigurationError


@dataclass(frozen=True)
class Source:
    """One passage of the context, as the prompt presents it to the model."""

    citation_id: str  # the token the model cites it by: "1" (inline_numbers) or "doc_42" (bracketed_ids)
    document_id: int
    title: str
    page: int
    text: str  # the passage
    similarity_score: float = 0.0  # retrieval relevance, 0..1
    # The cross-encoder's relevance (0..1) of the passage's best answer window, and that window
    # as it stands in `text` ("" when not reranked, redacted, or cut off by the token budget).
    answer_score: float | None = None
    focus: str = ""
    # What a citation may name instead of the token (rag.pipeline.postprocess.resolve): the last
    # page the passage covers (0: only `page`), its section heading, the uploaded file's name and
    # the passage's 1-based chunk number in its document (None: unknown).
    page_end: int = 0
    section: str = ""
    filename: str = ""
    chunk_number: int | None = None


@dataclass(frozen=True)
class Finding:
    """A sub-question answered in a reasoning step (rag.pipeline.reasoning), for the synthesis."""

    question: str
    answer: str | None  # None: not found in the step's sources
    citations: tuple[tuple[str, str], ...] = ()  # (citation token, quoted snippet), verified
    confidence: float = 0.0


@dataclass(frozen=True)
class Listing:
    """A matter review's list (rag.review): the sources are the evidence of each document found to
    hold `noun`, one per document in order; `checked` documents were read, `unchecked` says which
    more in scope could not be (rag.review.unchecked). `confidences`: the review's probability per
    source."""

    noun: str  # "a non-compete clause"
    checked: int
    unchecked: str = ""  # "2 more in scope could not be checked: …"
    confidences: tuple[float, ...] = ()
    # A document's key terms instead (rag.review.summary): each source's term, and the clause types
    # checked and not found.
    labels: tuple[str, ...] = ()
    # ... and each source's value-term questions ("Which state or country's law governs this
    # agreement?"; none for a clause type): its line states the value first, as an answer would.
    questions: tuple[tuple[str, ...], ...] = ()
    absent: tuple[str, ...] = ()
    more: int = 0  # documents that hold it beyond those quoted (too many to read as a list)


@dataclass(frozen=True)
class ComparedDocument:
    """One side of a comparison (rag.review.compare): a document, and what its row says when
    nothing in it was found on the topic (`missing`: "No termination provision found in …"; "" when
    its sources are in the context)."""

    document_id: int
    title: str
    missing: str = ""


@dataclass(frozen=True)
class Comparison:
    """A comparison answered side by side (rag.review.compare): the sources are each document's
    passages on `topic`, grouped by document in the order of `documents`; the answer is a table,
    one row per document, each quoting only its own document's sources."""

    topic: str  # "Termination rights" (the table's column heading)
    documents: tuple[ComparedDocument, ...]
    # The topic as a question about one document: a row states first the value it asks for (the
    # governing law, a date, a period), as the answer about that document alone would.
    question: str = ""


@dataclass(frozen=True)
class GenerationRequest:
    """A prompt to complete. `system` and `prompt` are what a remote model reads; `question` and
    `sources` are the same content, structured, for providers that work on it directly."""

    system: str
    prompt: str
    question: str
    sources: tuple[Source, ...] = ()
    temperature: float = 0.1
    max_tokens: int = 1024
    follow_up_count: int = 2
    # The template's answer shape, for providers that build the reply themselves (a remote model
    # reads them in the prompt): "terse" / "balanced" / "detailed", "lenient" / "normal" /
    # "strict", and the citation style ("end_list" ends the answer with a "Sources:" list).
    response_style: str = "balanced"
    strictness: str = "normal"
    citation_style: str = "inline_numbers"
    # Chain of thought: the answered sub-questions the reply brings together. The prompt carries
    # them for a remote model; the extractive provider composes them itself.
    findings: tuple[Finding, ...] = ()
    # The documents the question may mean (rag.retrieval.ambiguity): answer for each of them.
    each_document: tuple[int, ...] = ()
    # A question about every document in scope, answered as a list (rag.review): the prompt
    # carries it for a remote model; the extractive provider composes the list itself.
    listing: Listing | None = None
    # A clause review found what a yes/no question asks about (its noun): the answer opens "Yes.".
    affirmed: str = ""
    # ... and the citation ids of the sources holding its evidence (the paragraphs the review read
    # the clause in, beyond what search found): quoted after the answer's own quotes.
    evidence: tuple[str, ...] = ()
    # The sources are that evidence alone (search found nothing that answers): the answer's
    # confidence is the review's probability of the clause.
    evidence_confidence: float | None = None
    # A permission question about something the document's clause restricts (its noun): the answer
    # opens "No: …" or "Not freely: …".
    restricted: str = ""
    # The review did not find the clause a question about one document asks about, short of a
    # sure "No": the answer's first sentence (the nearest passage is quoted after it).
    doubted: str = ""
    # Documents compared side by side (rag.review.compare): the prompt carries it for a remote
    # model; the extractive provider composes the table itself.
    comparison: Comparison | None = None
    # The prompt leaves the sources out: the provider attaches them in its own form (Claude's
    # search-result blocks with citations, rag.llm.cited) and the reply is read from its citations.
    # `flagged`: citation tokens of the sources the injection scan flagged.
    sources_attached: bool = False
    flagged: tuple[str, ...] = ()


@dataclass(frozen=True)
class Generation:
    """A model's reply with what it cost."""

    text: str
    provider: str  # "extractive", "anthropic", "ollama"
    model: str
    input_tokens: int
    output_tokens: int
    cost_estimate: float  # US dollars
    latency_ms: float
    metadata: dict = field(default_factory=dict)
    # The reply was cut at the request's max_tokens (Anthropic stop_reason "max_tokens", Ollama
    # done_reason "length"): its last sentence, and its JSON, may be unfinished.
    truncated: bool = False

    @property
    def tokens_used(self) -> int:
        return self.input_tokens + self.output_tokens


class LLMProvider(Protocol):
    """A model behind one method. Implementations validate their configuration in __init__.

    A provider may also have `stream(request)`: a generator yielding the reply's text as the model
    writes it and returning the same `Generation` as `generate`; closing it early must stop the
    model's output (close the connection). The three built-in providers have it."""

    name: ClassVar[str]
    model: str

    def generate(self, request: GenerationRequest) -> Generation: ...


# A reply as it is written: its text in pieces, then (the generator's return value) the Generation.
TextStream = Generator[str, None, Generation]


def generate_streamed(provider: LLMProvider, request: GenerationRequest) -> TextStream:
    """`provider`'s reply to `request` as it is written: its `stream` when it has one, else its
    whole reply in one piece. Raises what `generate` raises."""
    stream = getattr(provider, "stream", None)
    if stream is None:
        generation = provider.generate(request)
        if generation.text:
            yield generation.text
        return generation
    return (yield from stream(request))


PROVIDERS = ("extractive", "anthropic", "ollama")


def get_provider(name: str | None = None) -> LLMProvider:
    """The provider called `name` (default settings.RAG_LLM_PROVIDER), configured from settings.

    Raises `ConfigurationError` for an unknown name or a provider missing its configuration.
    """
    name = (name or settings.RAG_LLM_PROVIDER or "").strip().lower()
    if name == "extractive":
        from .extractive import ExtractiveProvider

        return ExtractiveProvider()
    if name == "anthropic":
        from .anthropic import AnthropicProvider

        return AnthropicProvider()
    if name == "ollama":
        from .ollama import OllamaProvider

        return OllamaProvider()
    raise ConfigurationError(
        f"Unknown RAG_LLM_PROVIDER {name!r}.", details={"RAG_LLM_PROVIDER": f"One of {', '.join(PROVIDERS)}."}
    )


def configured_model(name: str | None = None) -> tuple[str, str]:
    """(provider, model) that `get_provider(name)` would use, read from settings without building
    the provider (for cache keys and dry runs)."""
    name = (name or settings.RAG_LLM_PROVIDER or "").strip().lower()
    if name == "extractive":
        from .extractive import MODEL

        return name, MODEL
    models = {"anthropic": settings.ANTHROPIC_MODEL, "ollama": settings.OLLAMA_MODEL}
    return name, models.get(name, "")
