"""The Python API of the RAG service (spec: rag-llm-service-interface.md).

    from rag.service import RAGService

    service = RAGService(tenant="acme-law")            # a Tenant or its slug
    answer = service.query("What is the notice period for termination?",
                           filters={"source": "msa.pdf", "max_results": 5}, citation_style="bracketed_ids")
    answer.answer, answer.citations, answer.confidence, answer.message
    service.health_check()  # {"status": "healthy" | "degraded" | "unhealthy", ...}

It runs the same pipeline as the REST API (`rag.pipeline.run.run_query`), so it sanitizes,
caches, checks citations and writes the audit row just the same. Errors are the typed
application errors: `InvalidQuery` (400), `VectorStoreUnavailable` (503), `LLMUnavailable` (503),
`GenerationTimeout` (504). A model answer without citations is "I don't know" (the spec's
NoCitationsFound), never an uncited claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from rag.pipeline.run import run_query
from rag.retrieval.service import Reader
from ragsite.health import health_check as system_health
from tenants.models import Role, Tenant
from tenants.selectors import tenant_get_by_slug


@dataclass(frozen=True)
class Answer:
    """The spec's Answer object; `result` is the full response (flags, provenance, timing)."""

    answer: str | None
    citations: list[dict]
    confidence: float
    message: str | None
    follow_up_questions: list[str]
    request_id: str
    processing_time_ms: float
    result: dict = field(repr=False)

    @classmethod
    def from_result(cls, result: dict) -> Answer:
        return cls(
            answer=result.get("answer"),  # None also for a dry run (see `result`)
            citations=list(result.get("citations", [])),
            confidence=result.get("confidence_score", 0.0),
            message=result.get("message"),
            follow_up_questions=list(result.get("follow_up_questions", [])),
            request_id=result["request_id"],
            processing_time_ms=result["provenance"]["timing"]["total_ms"],
            result=result,
        )

    def dict(self) -> dict:
        """The whole response as JSON-ready data."""
        return self.result


class RAGService:
    """Questions answered from one tenant's documents, as one reader (who decides redaction)."""

    def __init__(self, tenant: Tenant | str, *, user=None, role: str | None = None):
        self.tenant = tenant if isinstance(tenant, Tenant) else tenant_get_by_slug(slug=tenant)
        self.user = user
        self.role = role or Role.VIEWER

    def query(self, question: str, filters: dict | None = None, **options: Any) -> Answer:
        """Answer `question` with citations; `options` are the pipeline's per-request options
        (top_k, template_id, citation_style, strictness, follow_up_count, dry_run, ...).
        `filters` are the search filters plus the spec's `source` (a document's file name or
        title) and `max_results` (top_k), read by the pipeline as the REST API's are."""
        user_id = getattr(self.user, "pk", None)
        ctx = run_query(
            tenant=self.tenant,
            question=question,
            reader=Reader(user_id=user_id, role=self.role),
            user_id=user_id,
            filters=filters,
            **options,
        )
        return Answer.from_result(ctx.result)

    def health_check(self) -> dict:
        """The spec's health report: status plus each dependency's state."""
        report = system_health()
        llm = report["llm"]
        return {
            "status": report["status"],
            "llm": llm["status"],
            "llm_provider": llm["provider"],
            "ollama": _ollama_state() if settings.RAG_LLM_PROVIDER == "ollama" else "not_used",
            "vector_store": report["vector_store"]["status"],
            "embedding_model": report["embedding_model"]["status"],
            "timestamp": report["timestamp"],
        }


def _ollama_state() -> str:
    """ "connected" when the Ollama server answers, else "unreachable" (spec's health shape)."""
    from rag.llm.ollama import OllamaProvider

    return "connected" if OllamaProvider().ping() else "unreachable"
