"""The orchestration spec's Prometheus metrics, under its names (exported at /metrics by
django-prometheus with everything else in the default registry).

prometheus_client appends `_total` to counters, so `rag_queries` is exposed as rag_queries_total.
Per-call quantities the spec names without a suffix (documents retrieved, tokens, cost, citations,
confidence) are histograms: their `_sum` and `_count` give totals and means.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

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
