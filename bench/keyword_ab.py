#!/usr/bin/env python
# Keyword-leg benchmark, A against B: prints figures, it is not a test.
"""Two versions of rag/retrieval/keyword.py timed against each other on the same data, query by query.

    .venv/bin/python bench/keyword_ab.py --baseline OTHER_CHECKOUT/rag/retrieval/keyword.py \
        [--slug bench-1m] [--rounds 3]

The baseline file (B) is loaded beside this checkout's module (A) and used in its place; everything
else (filters, term statistics, the database) is this checkout's. For each of the 108 distinct
LegalBench-RAG queries bench/search.py uses, in shuffled order per round, both versions run the
keyword leg as hybrid search runs it (k = 40, the query vector given) and then hybrid search itself
(k = 10), in random order within the pair, after one warm-up pass. Pairing keeps the comparison fair
on a machine whose speed drifts from minute to minute (bench/README.md). Prints p50 / p95 / max of
each, the median ratio pair by pair, and in how many pairs both returned the same hits.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import setup_django  # noqa: E402


def load_baseline(path: Path):
    """The baseline keyword.py as a module of the rag.retrieval package (its relative imports)."""
    spec = importlib.util.spec_from_file_location("rag.retrieval.keyword_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def figures(ms: list[float]) -> str:
    from bench.search import summarize

    row = summarize(ms)
    return f"p50 {row['p50']:6.1f}  p95 {row['p95']:6.1f}  max {row['max']:6.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout's keyword.py (B)")
    parser.add_argument("--slug", default="bench-1m", help="tenant built by bench/search.py")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    setup_django()
    import numpy as np

    from bench.search import load_queries
    from rag.ingest import embedding
    from rag.retrieval import hybrid
    from rag.retrieval import keyword as current
    from tenants.models import Tenant

    baseline = load_baseline(args.baseline)
    tenant = Tenant.objects.get(slug=args.slug)
    questions, full = load_queries()
    queries = list(dict.fromkeys(questions + full))
    vectors = dict(zip(queries, embedding.embed(queries), strict=True))
    versions = {"A (this checkout)": current, "B (baseline)": baseline}

    def keyword_leg(module, query):
        return [
            h.chunk_id
            for h in module.keyword_search(tenant=tenant, query=query, k=40, query_vector=vectors[query])
        ]

    def hybrid_search(module, query):
        hybrid.keyword_search = module.keyword_search
        try:
            return [
                h.chunk_id
                for h in hybrid.hybrid_search(tenant=tenant, query=query, k=10, query_vector=vectors[query])
            ]
        finally:
            hybrid.keyword_search = current.keyword_search

    rng = random.Random(20241122)  # noqa: S311 (not security)
    for name, run in (("keyword leg (k=40)", keyword_leg), ("hybrid (k=10)", hybrid_search)):
        for query in queries:  # warm-up: statistics, caches
            for module in versions.values():
                run(module, query)
        times = {label: [] for label in versions}
        same = 0
        for _ in range(args.rounds):
            order = list(queries)
            rng.shuffle(order)
            for query in order:
                pair = list(versions.items())
                rng.shuffle(pair)
                hits = {}
                for label, module in pair:
                    started = time.perf_counter()
                    hits[label] = run(module, query)
                    times[label].append((time.perf_counter() - started) * 1000)
                same += len({tuple(found) for found in hits.values()}) == 1
        print(f"{name}, {len(queries)} queries x {args.rounds} rounds, tenant {args.slug}")
        for label, ms in times.items():
            print(f"   {label:18} {figures(ms)}")
        ratio = np.asarray(times["A (this checkout)"]) / np.asarray(times["B (baseline)"])
        print(
            f"   A/B pair by pair: median {np.median(ratio):.2f};",
            f"the same hits in {same} of {len(ratio)} pairs",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
