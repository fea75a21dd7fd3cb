"""The Python API of the RAG service (spec: rag-llm-service-interface.md).

    from rag.service import RAGService

    service = RAGService(tenant="acme-law")            # a Tenant or its slug
    # the spec's keyword form, with the tenant given separately (either spelling):
    service = RAGService(ollama_host="http://localhost:11434", vector_store_url="http://localhost:8001",
                         embedding_model="all-MiniLM-L6-v2", tenant="acme-law")
    service = RAGService.for_tenant("acme-law", ollama_host="http://localhost:11434")
    answer = service.query("What is the notice period for termination?",
                           filters={"source": "msa.pdf", "max_results": 5}, citation_style="bracketed_ids")
    answer.answer, answer.citations, answer.confidence, answer.message
    service.health_check()  # {"status": "healthy" | "degraded" | "unhealthy", ...}

It runs the same pipeline as the REST API (`rag.pipeline.run.run_query`), so it sanitizes,
caches, checks citations and writes the audit row just the same. Errors are the typed
application errors: `InvalidQuery` (400), `VectorStoreUnavailable` (503), `LLMUnavailable` (503),
`GenerationTimeout` (504). A model answer without citations is "I don't know" (the spec's
NoCitationsFound), never an uncited claim.

The spec's constructor arguments:
- `ollama_host`: the Ollama server this service's answers and health check use (the process keeps
  OLLAMA_HOST). Needs RAG_LLM_PROVIDER=ollama: given with another provider it is a
  `ConfigurationError`, never silently unused.
- `embedding_model`: must name the model the index was built with (EMBEDDING_MODEL), else a
  `ConfigurationError`; questions are always embedded with that model.
- `vector_store_url`: accepted and unused: the vector store is pgvector in the application's
  database (docs/spec-differences.md).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from rag.ingest.embedding import PACKAGED_MODEL_NAME
from rag.llm.overrides import using_ollama_host
from rag.pipeline.run import run_query
from rag.retrieval.service import Reader
from ragsite.exceptions import ConfigurationError
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

    def __init__(
        self,
        tenant: Tenant | str | None = None,
        *,
        ollama_host: str | None = None,
        vector_store_url: str | None = None,
        embedding_model: str | None = None,
        user=None,
        role: str | None = None,
    ):
        """A service for `tenant` (a Tenant or its slug; unknown: `NotFound`). The spec's keyword
        arguments are checked here (see the module docstring); a bad one is a `ConfigurationError`."""
        if tenant is None:
            raise ConfigurationError(
                "RAGService needs the tenant whose documents it answers from.",
                details={
                    "tenant": "RAGService(tenant='acme-law', ...) or RAGService.for_tenant('acme-law', ...)."
                },
            )
        self.ollama_host = _checked_ollama_host(ollama_host)
        self.embedding_model = _checked_embedding_model(embedding_model)
        self.vector_store_url = vector_store_url  # unused: pgvector lives in the database
        self.tenant = tenant if isinstance(tenant, Tenant) else tenant_get_by_slug(slug=tenant)
        self.user = user
        self.role = role or Role.VIEWER

    @classmethod
    def for_tenant(cls, tenant: Tenant | str, **spec_kwargs: Any) -> RAGService:
        """`RAGService(ollama_host=..., vector_store_url=..., embedding_model=...)` as the spec
        writes it, for `tenant` (a Tenant or its slug)."""
        return cls(tenant, **spec_kwargs)

    def query(self, question: str, filters: dict | None = None, **options: Any) -> Answer:
        """Answer `question` with citations; `options` are the pipeline's per-request options
        (top_k, template_id, citation_style, strictness, follow_up_count, dry_run, ...).
        `filters` are the search filters plus the spec's `source` (a document's file name or
        title) and `max_results` (top_k), read by the pipeline as the REST API's are."""
        user_id = getattr(self.user, "pk", None)
        with using_ollama_host(self.ollama_host):
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
        """The spec's health report, the same verdict as GET /api/v1/health: `status` healthy /
        degraded / unhealthy, `ollama` connected / unreachable (at this service's `ollama_host`;
        "not_used" with another provider) with the `ollama_models` present, `vector_store`,
        `embedding_model` and `timestamp`."""
        with using_ollama_host(self.ollama_host):
            report = system_health()
        llm = report["llm"]
        return {
            "status": report["status"],
            "llm": llm["status"],
            "llm_provider": llm["provider"],
            **_ollama_fields(llm),
            "vector_store": report["vector_store"]["status"],
            "embedding_model": report["embedding_model"]["status"],
            "timestamp": report["timestamp"],
        }


def _ollama_fields(llm: dict) -> dict:
    """The spec's `ollama` field from the health report's llm entry, and the models it has."""
    if llm["provider"] != "ollama":
        return {"ollama": "not_used"}
    reachable = llm.get("ollama") == "reachable"
    return {"ollama": "connected" if reachable else "unreachable", "ollama_models": llm.get("models", [])}


def _checked_ollama_host(host: str | None) -> str | None:
    """`host` as an http(s) URL without a trailing slash, or None when not given.

    A host for a provider that is not Ollama would do nothing, so it is refused."""
    if host is None:
        return None
    if settings.RAG_LLM_PROVIDER != "ollama":
        raise ConfigurationError(
            f"ollama_host is given but RAG_LLM_PROVIDER is {settings.RAG_LLM_PROVIDER!r}.",
            details={"ollama_host": "Used only with RAG_LLM_PROVIDER=ollama; leave it out otherwise."},
        )
    host = str(host).strip().rstrip("/")
    parts = urllib.parse.urlsplit(host)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            "ollama_host is not an http(s) URL.",
            details={"ollama_host": "The server's URL, such as http://localhost:11434."},
        )
    return host


def _checked_embedding_model(name: str | None) -> str:
    """The index's embedding model (EMBEDDING_MODEL), which `name`, when given, must be.

    Questions must be embedded with the model the passages were: another model's vectors would
    be compared with them and retrieve nonsense, so a different name is refused, not obeyed."""
    indexed = settings.EMBEDDING_MODEL
    if name is None or _model_key(name) == _model_key(indexed):
        return indexed
    raise ConfigurationError(
        f"embedding_model {name!r} does not match the index's model {indexed!r}.",
        details={
            "embedding_model": f"The index is built with EMBEDDING_MODEL={indexed!r}; give that or nothing."
        },
    )


def _model_key(name: str) -> str:
    """A model name with the packaged model's hub spelling (`sentence-transformers/...`) made short."""
    name = str(name).strip()
    return PACKAGED_MODEL_NAME if name == f"sentence-transformers/{PACKAGED_MODEL_NAME}" else name
