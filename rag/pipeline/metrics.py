"""The orchestration spec's Prometheus metrics, under its names, exported with django-prometheus's
at the operator's /metrics and, one tenant's series, at /api/v1/rag/admin/metrics.

Deployed, the counting is spread over processes (gunicorn workers; Celery workers running async query
jobs): with PROMETHEUS_MULTIPROC_DIR set each writes to that shared directory and `collect()` adds
up every process's files (ragsite/multiprocess_metrics.py).

prometheus_client appends `_total` to counters, so `rag_queries` is exposed as rag_queries_total.
Per-call quantities the spec names without a suffix (documents retrieved, tokens, cost, citations,
confidence) are histograms: their `_sum` and `_count` give totals and means.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector

PREFIX = "rag_"
# The Prometheus text format the admin endpoint answers with (prometheus_client's default is now 1.0.0).
TEXT_CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
UNKNOWN_TEMPLATE = "unknown"  # the template label of a run whose template was never resolved

QUERIES = Counter("rag_queries", "Queries answered, by outcome.", ["tenant", "template", "status"])
QUERY_DURATION = Histogram(
    "rag_query_duration_seconds",
    "Whole-pipeline latency.",
    ["tenant", "template"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 30),
)
DOCUMENTS_RETRIEVED = Histogram(
    "rag_documents_retrieved",
    "Passages retrieved per query.",
    ["tenant"],
    buckets=(0, 1, 2, 3, 5, 8, 13, 21, 50),
)
SEARCH_LATENCY = Histogram(
    "rag_search_latency_seconds",
    "Retrieval latency (search, rank, rerank).",
    ["tenant"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 5),
)
MODEL_CALLS = Counter("rag_model_calls", "Model calls.", ["provider", "model"])
MODEL_TOKENS = Histogram(
    "rag_model_tokens_used",
    "Tokens per model call (input + output).",
    ["provider"],
    buckets=(100, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000),
)
MODEL_COST = Histogram(
    "rag_model_cost_estimate",
    "Estimated cost per model call, US dollars.",
    ["provider"],
    buckets=(0, 0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1),
)
CITATIONS = Histogram(
    "rag_citations_per_response", "Citations per answer.", ["template"], buckets=(0, 1, 2, 3, 4, 5, 8, 13)
)
CONFIDENCE = Histogram(
    "rag_confidence_score",
    "Confidence of answers.",
    ["template"],
    buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
)
HALLUCINATIONS = Counter("rag_hallucinations_detected", "Answers whose checks failed.", ["tenant"])
CACHE_HITS = Counter("rag_cache_hits", "Answer cache hits.", ["tenant"])
CACHE_MISSES = Counter("rag_cache_misses", "Answer cache misses.", ["tenant"])


# --- One tenant's view (GET /api/v1/rag/admin/metrics) ------------------------------------------


def sample_visible(labels: Mapping[str, str], *, tenant_slug: str, template_ids: Collection[str]) -> bool:
    """Whether a sample with `labels` may be shown to the tenant `tenant_slug`: only what counts
    the tenant's own queries.

    A `tenant` label must be the tenant's own. Without one, a `template` label must name one of the
    tenant's own templates (`template_ids`): a built-in's series counts every firm's queries, and
    another firm's custom template ids would leak. Samples with neither (provider and model) count
    the whole platform: they are the operator's (`/metrics`), not a firm's.
    """
    if "tenant" in labels:
        return labels["tenant"] == tenant_slug
    if "template" in labels:
        return labels["template"] in template_ids
    return False


def tenant_view(
    families: Iterable[Metric], *, tenant_slug: str, template_ids: Collection[str]
) -> list[Metric]:
    """The `rag_*` families of `families`, each with only the samples `sample_visible` allows."""
    visible = []
    for family in families:
        if not family.name.startswith(PREFIX):
            continue
        copy = Metric(family.name, family.documentation, family.type, family.unit)
        copy.samples = [
            sample
            for sample in family.samples
            if sample_visible(sample.labels, tenant_slug=tenant_slug, template_ids=template_ids)
        ]
        visible.append(copy)
    return visible


def collect() -> list[Metric]:
    """Every metric family of this process, or of every process sharing PROMETHEUS_MULTIPROC_DIR
    when it is set (gunicorn workers and Celery workers each count their own; prometheus_client
    merges their files)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return list(registry.collect())
    return list(REGISTRY.collect())


class _Families:
    """The collector interface `generate_latest` reads from."""

    def __init__(self, families: list[Metric]):
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return iter(self._families)


def exposition(families: list[Metric]) -> bytes:
    """`families` in the Prometheus text format 0.0.4 (TEXT_CONTENT_TYPE)."""
    return generate_latest(_Families(families))
