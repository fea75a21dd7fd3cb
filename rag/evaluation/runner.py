"""Run LegalBench-RAG through Lexrag: ingest a corpus into an evaluation tenant, retrieve for every
query through `rag.retrieval.service.retrieve` (the path the query API uses), and score the spans
of the passages it returns."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.utils.text import slugify

from rag import services as rag_services
from rag.ingest import embedding, service
from rag.models import DocType
from rag.retrieval.service import Reader, retrieve
from ragsite.exceptions import NotFound
from tenants.models import Role, Tenant
from tenants.selectors import tenant_get_by_slug
from tenants.services import tenant_create

from . import legalbench

SUFFIXES = {".txt", ".pdf", ".docx"}


@dataclass(frozen=True)
class Corpus:
    tenant: Tenant
    paths: dict[int, str]  # document id → file path relative to the corpus root ("cuad/x.txt")
    failed: list[tuple[str, str]]


def corpus_settings() -> dict:
    """What the index depends on: a tenant indexed under other values is not reused."""
    return {
        "chunk_size": settings.RAG_CHUNK_SIZE,
        "chunk_overlap": settings.RAG_CHUNK_OVERLAP,
        "embedding_model": embedding.model_id(),
        "passages": service.passage_rule(),
    }


def evaluation_tenant(corpus_dir: Path) -> Tenant:
    """The isolated tenant for this corpus and these index settings (created when missing)."""
    key = f"{corpus_dir.resolve()}|{sorted(corpus_settings().items())}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    slug = f"eval-{slugify(corpus_dir.resolve().name)[:30]}-{digest}"
    try:
        return tenant_get_by_slug(slug=slug)
    except NotFound:
        return tenant_create(slug=slug, name=f"Evaluation {corpus_dir.name}")


def ingest_corpus(corpus_dir: Path, *, progress: Callable = lambda items, **_: items) -> Corpus:
    """Ingest every file under `corpus_dir` (already-indexed files are recognised by content)."""
    tenant = evaluation_tenant(corpus_dir)
    case = rag_services.case_get_or_create(tenant=tenant, name="evaluation corpus")
    fields = service.DocumentFields(doc_type=DocType.CONTRACT)
    files = sorted(p for p in corpus_dir.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    paths: dict[int, str] = {}
    failed = []
    for path in progress(files, desc="indexing corpus", unit="file"):
        outcome = service.ingest_now(
            tenant=tenant, case=case, filename=path.name, content=path.read_bytes(), fields=fields
        )
        if outcome.document is not None and outcome.status in ("ok", "duplicate"):
            paths[outcome.document.pk] = path.relative_to(corpus_dir).as_posix()
        else:
            failed.append((str(path), outcome.reason))
    return Corpus(tenant=tenant, paths=paths, failed=failed)


@dataclass(frozen=True)
class QueryRun:
    query: legalbench.BenchmarkQuery
    retrieved: list[legalbench.Span]
    routed: list[str]


def run_queries(
    corpus: Corpus,
    queries: Sequence[legalbench.BenchmarkQuery],
    *,
    k: int,
    mode: str,
    similarity_threshold: float,
    progress: Callable = lambda items, **_: items,
) -> list[QueryRun]:
    """Retrieve the top `k` passages for each query; their exact spans in the original files."""
    runs = []
    reader = Reader(role=Role.OWNER)  # evaluation reads everything it indexed
    for query in progress(queries, desc="querying", unit="query"):
        if mode == AGENTIC:
            runs.append(_agentic_run(corpus, query, reader, k))
            continue
        result = retrieve(
            tenant=corpus.tenant,
            query=query.query,
            top_k=k,
            mode=mode,
            reader=reader,
            similarity_threshold=similarity_threshold,
        )
        spans = [
            legalbench.Span(corpus.paths[p.document_id], p.char_start, p.char_end)
            for p in result.passages
            if p.document_id in corpus.paths
        ]
        routed = [corpus.paths.get(d.document_id, "?") for d in result.routing.documents]
        runs.append(QueryRun(query=query, retrieved=spans, routed=routed))
    return runs


AGENTIC = "agentic"


def _agentic_run(corpus: Corpus, query: legalbench.BenchmarkQuery, reader: Reader, k: int) -> QueryRun:
    """The evidence rag.agent's loop gathers (at most `k` passages, best first) as the retrieved
    spans; "routed" are the documents its decomposition made a `doc_id` filter."""
    from rag.agent.loop import run_agent
    from rag.agent.planner import RulePlanner
    from rag.agent.tools import AgentTools, document_pk
    from rag.selectors import index_version_get

    planner = RulePlanner(tenant=corpus.tenant, index_version=index_version_get(tenant=corpus.tenant))
    run = run_agent(
        question=query.query,
        tools=AgentTools(tenant=corpus.tenant, reader=reader),
        planner=planner,
        max_tool_calls=settings.RAG_AGENT_MAX_TOOL_CALLS,
        time_budget=settings.RAG_AGENT_TIME_BUDGET_SECONDS,
        evidence_limit=k,
    )
    spans = [
        legalbench.Span(corpus.paths[e.passage.document_id], e.passage.char_start, e.passage.char_end)
        for e in run.evidence
        if e.passage.document_id in corpus.paths
    ]
    filtered = [c.value for c in run.decomposition.constraints if c.field == "doc_id"]
    routed = [corpus.paths.get(document_pk(doc_id), "?") for doc_id in (filtered[0] if filtered else [])]
    return QueryRun(query=query, retrieved=spans, routed=routed)


def routing_accuracy(runs: Sequence[QueryRun]) -> float:
    """Share (%) of queries whose first routed document is the one holding their gold spans."""
    hits = sum(1 for run in runs if run.routed and run.routed[0] == run.query.gold[0].file_path)
    return 100 * hits / max(len(runs), 1)
