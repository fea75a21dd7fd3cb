"""The one object that travels through the pipeline's stages (HOUSE.md, "The pipeline").

Stages read what earlier stages left and add their own results; the executor adds timings and
per-stage metadata. A stage may `halt()` the run (cache hit, dry run, nothing found): the stages
after it are skipped, except those marked `runs_after_halt` (assembly, cache store, metrics and
audit), which finish the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from rag.retrieval.service import CandidateSet, RankedSet, Reader, RetrievalResult
from tenants.models import Tenant

from .config import QueryConfig

if TYPE_CHECKING:
    from rag.agent.loop import AgentRun
    from rag.llm import Generation
    from rag.review.classify import Review
    from rag.review.compare import Comparison
    from rag.review.summary import KeyTerms
    from templates_admin.models import PromptTemplate
    from templates_admin.rendering import RenderedPrompt

    from .context_builder import BuiltContext
    from .postprocess import ProcessedAnswer
    from .reasoning import Reasoning
    from .sanitize import SanitizedInput
    from .verify import Verification


@dataclass
class QueryContext:
    # Input
    tenant: Tenant
    question: str
    config: QueryConfig
    request_id: str
    reader: Reader = field(default_factory=Reader)
    user_id: int | None = None
    api_key_prefix: str = ""  # the API key that asks, when no user does
    options: dict[str, Any] = field(default_factory=dict)  # as the caller gave them (audit, re-run)
    origin: str = ""  # what asked on the caller's behalf ("review_table"), when nobody typed it
    started_at: datetime = field(default_factory=timezone.now)
    # The answer is streamed (rag.pipeline.streaming): the executor's `events` yields the
    # generation stage's text as the model writes it. Not part of the config: the cache key,
    # the audit row and the result are the same either way.
    stream: bool = False

    # Sanitize, cache lookup, enhancement
    sanitized: SanitizedInput | None = None
    index_version: int | None = None
    indexed_at: datetime | None = None  # when the tenant's corpus last changed
    weights_version: int | None = None
    template: PromptTemplate | None = None
    cache_key: str | None = None
    search_query: str | None = None  # the question as searched (rewritten with earlier turns)
    conversation: list[str] = field(default_factory=list)  # earlier questions of the conversation

    # Retrieval
    # ((query, filters), routing): the question's routing, made once (rag.pipeline.routed)
    routed: tuple | None = None
    candidates: CandidateSet | None = None
    ranked: RankedSet | None = None
    retrieval: RetrievalResult | None = None

    # The cross-encoder's judgement that the passages answer the question (0..1; None: no reranker)
    answerability: float | None = None
    agent: AgentRun | None = None  # agentic mode: the loop's trace and evidence
    # A question about every document in scope (rag.review): each document's verdict; the
    # search stages are skipped (their `searches` is set) and the answer lists the documents.
    # KeyTerms: a summary's terms (rag.review.summary); Comparison: documents compared side by side
    # (rag.review.compare), each with its own passages.
    review: Review | KeyTerms | Comparison | None = None
    # A question that may mean several documents (rag.retrieval.ambiguity): the candidates, each
    # searched alone by the each_candidate stage, whose passages are the retrieval; the search
    # stages are skipped, as after a matter review.
    each_candidate: tuple[int, ...] = ()
    # A yes/no question about one document whose clause the review found: the answer opens "Yes."
    affirmed: str | None = None  # the clause's noun ("a non-compete clause")
    # ... and the review's evidence of the clause in that document, (chunk id, document id, window),
    # best first; the passages the clause_evidence stage added for it (quoted after search's quote).
    clause_evidence: list = field(default_factory=list)
    evidence_passages: tuple = ()
    # A permission question ("Can it be assigned without consent?") about a document whose clause
    # restricts it: the answer opens "No: …" / "Not freely: …" (rag.answers.asked.restricted_opening).
    restricted: str | None = None
    # ... the review's probability of that clause: at SURE or more (rag.review.model), where
    # search's passages do not answer, the review's evidence does (`from_evidence`: the context is
    # that evidence alone, and the answer's confidence the review's).
    clause_probability: float | None = None
    from_evidence: bool = False
    # A question for the agreement's date or Effective Date whose document dates itself (the
    # `document_dates` stage added or found the passage): answerable, though search's passages
    # may never say "effective" (the agreement's date is then stated, and said to be that).
    dated: bool = False
    # A question about one document whose clause the review did not find, but not surely enough
    # to answer "No": the answer opens with this sentence ("Probably not: a non-compete clause was
    # not found in …") and then quotes what search found and the review's nearest paragraph, to check.
    doubted: str | None = None
    reasoning: Reasoning | None = None  # chain of thought: the sub-questions and their answers

    # Prompt
    context: BuiltContext | None = None
    citation_style: str | None = None
    # Agentic mode's model cites [doc_42] because the spec asks it to, not because the request did:
    # the reader still gets [1], [2] (rag.pipeline.numbering).
    ids_for_model_only: bool = False
    strictness: str | None = None
    follow_up_count: int | None = None
    prompt: RenderedPrompt | None = None

    # Answer
    generations: list[Generation] = field(default_factory=list)  # the first call, then any re-runs
    processed: ProcessedAnswer | None = None
    verification: Verification | None = None
    first_verification: Verification | None = None  # before any mitigation
    mitigation: list[str] = field(default_factory=list)  # "re-run", "removed", "disclaimer"
    not_found_reason: str | None = None  # why the answer is "I don't know", if it is
    not_found_message: str | None = None  # what to tell the user instead of the generic message

    # Output
    result: dict | None = None
    cache_hit: bool = False
    halted: str | None = None  # why later stages were skipped: "cache_hit", "dry_run", "no_passages"
    timings: dict[str, float] = field(default_factory=dict)  # ms per stage
    stage_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)  # failures of non-critical stages
    failure: Exception | None = None  # the critical failure that aborted the run, if any

    @property
    def searched_before(self) -> bool:
        """Whether a stage before the search stages has found the passages (a matter review or a
        comparison, `review`; an ambiguous question's candidates, `each_candidate`): the stages
        marked `searches` are skipped."""
        return self.review is not None or bool(self.each_candidate)

    def halt(self, reason: str) -> None:
        """Skip the remaining stages except those that finish the result."""
        self.halted = reason

    def note(self, stage: str, **metadata: Any) -> None:
        """Record metadata about what `stage` did: returned in the result's `provenance.stages`,
        and logged (through `loggable_metadata`) in the stage's DEBUG line and the "query finished"
        line. Values must be JSON-serializable."""
        self.stage_metadata.setdefault(stage, {}).update(metadata)

    @property
    def generation(self) -> Generation | None:
        """The generation the answer comes from (the last one)."""
        return self.generations[-1] if self.generations else None

    @property
    def total_ms(self) -> float:
        return round(sum(self.timings.values()), 2)

    def stage_ms(self, *names: str) -> float:
        """The time the named stages took together (0 for stages that did not run)."""
        return round(sum(self.timings.get(f"{name}_ms", 0.0) for name in names), 2)


# Metadata keys whose text values are labels the code chooses (a mode, a reason, a pattern's name),
# never words of the question, the answer or a document: the log keeps them as they are.
LABEL_KEYS = frozenset(
    {
        "citation_style", "clause_types", "column", "dropped_reason", "failed", "injection_flagged",
        "injection_patterns", "intent", "kind", "model", "language", "missing_clause", "mitigation", "mode",
        "output_format", "planner", "reason", "reranker", "skipped", "stopped", "strategy",
        "strictness", "template_id", "thresholds",
    }
)  # fmt: skip


def loggable_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """`metadata` (what a stage noted) as a log line may carry it: numbers, flags and the labels of
    LABEL_KEYS as they are; any other text (the search query, the routing's reading of the question,
    answer sentences, citation tokens a model wrote) left out, and other lists only counted."""
    logged: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, dict):
            logged[key] = loggable_metadata(value)
        elif value is None or isinstance(value, bool | int | float) or key in LABEL_KEYS:
            logged[key] = value
        elif isinstance(value, list | tuple):
            logged[key] = len(value)
    return logged
