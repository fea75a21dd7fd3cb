"""The one entry point that runs a query through the pipeline: the sync API, the Celery job, the
dry-run simulation and `rag.service.RAGService` all call `run_query`; a streamed answer
(`"stream": true`) calls `stream_query`, the same stages with the generation's text yielded."""

from __future__ import annotations

import inspect
from collections.abc import Generator

from rag.retrieval.service import Reader
from ragsite.exceptions import InvalidQuery, NotFound
from ragsite.request_id import get_request_id, new_request_id
from tenants.models import Tenant

from .config import QueryConfig
from .context import QueryContext
from .executor import PipelineExecutor
from .sanitize import sanitize
from .scope import scope_resolve
from .stages.agent import AgentSearchStage
from .stages.ambiguity import EachCandidateStage
from .stages.answer import PostProcessStage, VerifyStage
from .stages.cache_lookup import CacheLookupStage
from .stages.compare import CompareStage
from .stages.dates import DocumentDatesStage
from .stages.enhance import EnhanceQueryStage
from .stages.evidence import ClauseEvidenceStage
from .stages.finish import AssembleStage, CacheStoreStage, RecordStage
from .stages.generate import GenerateStage
from .stages.prompt import BuildContextStage, BuildPromptStage, SelectTemplateStage
from .stages.reasoning import ReasoningSearchStage, ReasoningStage
from .stages.retrieve import RankStage, RerankStage, RetrieveStage
from .stages.review import MatterReviewStage
from .stages.sanitize import SanitizeStage


def default_executor(*, agentic: bool = False) -> PipelineExecutor:
    """The stages in order (orchestration spec, with the template chosen before the context).
    `agentic`: rag.agent's loop gathers the evidence instead of one retrieve → rank → rerank.
    The two reasoning stages do nothing unless the question calls for chain of thought."""
    search = [AgentSearchStage()] if agentic else [RetrieveStage(), RankStage(), RerankStage()]
    return PipelineExecutor(
        [
            SanitizeStage(),
            CacheLookupStage(),
            EnhanceQueryStage(),
            MatterReviewStage(),
            CompareStage(),
            EachCandidateStage(),
            *search,
            ReasoningSearchStage(),
            DocumentDatesStage(),
            ClauseEvidenceStage(),
            SelectTemplateStage(),
            BuildContextStage(),
            BuildPromptStage(),
            ReasoningStage(),
            GenerateStage(),
            PostProcessStage(),
            VerifyStage(),
            AssembleStage(),
            CacheStoreStage(),
        ],
        finally_stages=[RecordStage()],
    )


def reserved_option_errors(options) -> dict[str, str]:
    """{name: "Unknown option."} for each request option named like one of `run_query`'s own
    arguments (tenant, reader, user_id, request_id, executor, ...): passed through as **options
    they would impersonate the caller or clash with the arguments the API gives."""
    return {name: "Unknown option." for name in options if name in _RUN_QUERY_ARGUMENTS}


def run_query(
    *,
    tenant: Tenant,
    question,
    reader: Reader | None = None,
    user_id: int | None = None,
    api_key_prefix: str = "",
    request_id: str | None = None,
    executor: PipelineExecutor | None = None,
    origin: str = "",
    **options,
) -> QueryContext:
    """Answer `question` for `tenant` with `options` (QueryConfig's fields, at the top level or in
    `config_metadata`); returns the finished context, whose `result` is the response. Raises
    `NotFound` (404) before any stage for filters naming a case or document the tenant lacks, else
    the typed error of a failing stage (`InvalidQuery` 400, `NotFound` 404,
    `VectorStoreUnavailable` 503, `LLMUnavailable` 503, `GenerationTimeout` 504, ...); the audit row
    and metrics record failures too, invalid options included.

    `reader` decides which confidential text may be read (default: a viewer with no access);
    `user_id` or `api_key_prefix` name the caller for the audit trail and conversation history.
    `origin` names what asked on the caller's behalf ("review_table": a table's cell): audited, but
    kept out of the caller's own question history.
    """
    ctx = _context(tenant, question, reader, user_id, api_key_prefix, request_id, options)
    ctx.origin = origin
    return _configured(ctx, executor, options).execute(ctx)


def stream_query(
    *,
    tenant: Tenant,
    question,
    reader: Reader | None = None,
    user_id: int | None = None,
    api_key_prefix: str = "",
    request_id: str | None = None,
    **options,
) -> tuple[QueryContext, Generator[object, None, QueryContext]]:
    """`run_query` with the answer streamed: returns the context and the executor's `events`
    (rag.pipeline.streaming), which run the stages as they are pulled, yield the generation's text
    as the model writes it and return the finished context (cached, audited and counted as
    `run_query`'s). Raises at once what `run_query` raises before its first stage; pulling the
    events raises the stages' errors. Closing the events early records `ClientDisconnected`."""
    ctx = _context(tenant, question, reader, user_id, api_key_prefix, request_id, options)
    ctx.stream = True
    return ctx, _configured(ctx, None, options).events(ctx)


def _configured(ctx: QueryContext, executor: PipelineExecutor | None, options: dict) -> PipelineExecutor:
    """Validate `options` into `ctx.config` (a refusal is recorded, then raised); returns the executor."""
    try:
        ctx.config = _checked_config(ctx.tenant, options, ctx.reader)
    except (InvalidQuery, NotFound) as exc:
        (executor or default_executor()).record_refusal(ctx, exc)
        raise
    # agentic may come as an option or inside config_metadata: the validated config decides.
    return executor or default_executor(agentic=ctx.config.agentic)


def simulate_query(
    *,
    tenant: Tenant,
    question,
    reader: Reader | None = None,
    user_id: int | None = None,
    api_key_prefix: str = "",
    **options,
) -> dict:
    """The spec's "Simulation / Dry Run": `run_query` with dry_run on, so the pipeline stops once
    the prompt is built and no model is called. Returns the dry-run result (the prompt, the selected
    passages, the estimated tokens and the model that would answer); the run is audited as dry_run.
    Raises what `run_query` raises. POST /admin/simulate and the Django admin both call it."""
    ctx = run_query(
        tenant=tenant,
        question=question,
        reader=reader,
        user_id=user_id,
        api_key_prefix=api_key_prefix,
        dry_run=True,
        **options,
    )
    return dict(ctx.result)


def validate_query(
    *,
    tenant: Tenant,
    question,
    reader: Reader | None = None,
    user_id: int | None = None,
    api_key_prefix: str = "",
    request_id: str | None = None,
    executor: PipelineExecutor | None = None,
    **options,
) -> None:
    """Refuse now what `run_query` would refuse before searching (bad options, filters naming a case
    or document the tenant lacks, an empty, too long or — under the reject policy — injected
    question), recorded the same way. For requests that
    run later, such as async jobs, so a bad request fails at once instead of as a job."""
    executor = executor or default_executor()
    ctx = _context(tenant, question, reader, user_id, api_key_prefix, request_id, options)
    try:
        ctx.config = _checked_config(tenant, options, ctx.reader)
        sanitize(question, tenant_id=tenant.pk, options=ctx.config.cache_fields())
    except (InvalidQuery, NotFound) as exc:
        executor.record_refusal(ctx, exc)
        raise


def _checked_config(tenant: Tenant, options: dict, reader: Reader) -> QueryConfig:
    """The validated options, their scope checked and resolved against the tenant and bounded by
    what `reader` may see (rag.pipeline.scope)."""
    return scope_resolve(tenant=tenant, config=QueryConfig.from_options(**options), reader=reader)


def _context(tenant, question, reader, user_id, api_key_prefix, request_id, options) -> QueryContext:
    return QueryContext(
        tenant=tenant,
        question=question,
        config=QueryConfig.from_options(),  # the defaults, until the options are validated
        request_id=request_id or get_request_id() or new_request_id(),
        reader=reader or Reader(user_id=user_id),
        user_id=user_id,
        api_key_prefix=api_key_prefix or "",
        options=options,
    )


_RUN_QUERY_ARGUMENTS = frozenset(
    name
    for name, parameter in inspect.signature(run_query).parameters.items()
    if parameter.kind is not inspect.Parameter.VAR_KEYWORD
)
