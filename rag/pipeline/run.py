"""The one entry point that runs a query through the pipeline: the sync API, the Celery job, the
dry-run simulation and `rag.service.RAGService` all call `run_query`."""

from __future__ import annotations

from rag.retrieval.service import Reader
from ragsite.request_id import get_request_id, new_request_id
from tenants.models import Tenant

from .config import QueryConfig
from .context import QueryContext
from .executor import PipelineExecutor
from .stages.answer import PostProcessStage, VerifyStage
from .stages.cache_lookup import CacheLookupStage
from .stages.enhance import EnhanceQueryStage
from .stages.finish import AssembleStage, CacheStoreStage, RecordStage
from .stages.generate import GenerateStage
from .stages.prompt import BuildContextStage, BuildPromptStage, SelectTemplateStage
from .stages.retrieve import RankStage, RerankStage, RetrieveStage
from .stages.sanitize import SanitizeStage


def default_executor() -> PipelineExecutor:
    """The stages in order (orchestration spec, with the template chosen before the context)."""
    return PipelineExecutor(
        [
            SanitizeStage(),
            CacheLookupStage(),
            EnhanceQueryStage(),
            RetrieveStage(),
            RankStage(),
            RerankStage(),
            SelectTemplateStage(),
            BuildContextStage(),
            BuildPromptStage(),
            GenerateStage(),
            PostProcessStage(),
            VerifyStage(),
            AssembleStage(),
            CacheStoreStage(),
        ],
        finally_stages=[RecordStage()],
    )


def run_query(
    *,
    tenant: Tenant,
    question,
    reader: Reader | None = None,
    user_id: int | None = None,
    request_id: str | None = None,
    executor: PipelineExecutor | None = None,
    **options,
) -> QueryContext:
    """Answer `question` for `tenant` with `options` (QueryConfig's fields); returns the finished
    context, whose `result` is the response. Raises the typed error of a failing stage
    (`InvalidQuery` 400, `NotFound` 404, `VectorStoreUnavailable` 503, `LLMUnavailable` 503,
    `GenerationTimeout` 504, ...); the audit row and metrics record failures too."""
    config = QueryConfig.from_options(**options)
    ctx = QueryContext(
        tenant=tenant,
        question=question,
        config=config,
        request_id=request_id or get_request_id() or new_request_id(),
        reader=reader or Reader(user_id=user_id),
        user_id=user_id,
    )
    return (executor or default_executor()).execute(ctx)
