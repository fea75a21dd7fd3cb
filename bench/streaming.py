#!/usr/bin/env python
# Streamed answers: time to first token, a benchmark that prints figures (it is not a test).
#
# `rag.pipeline.run.stream_query` (the stages behind `"stream": true`) with the offline extractive
# provider over the 29 LegalBench-RAG CUAD contracts (ingested on first use) for the 83 distinct
# dev queries, uncached, after a warm-up pass. Per query:
#   - first token: from the call to the first answer delta (everything before the model included:
#     sanitize, retrieval, rerank, context, prompt), the figure a reader waits for;
#   - model first token: from the generation stage's start to its first delta (the provider's own
#     time to first token);
#   - complete: the whole run, the verified result and the audit row included.
# A cache hit streams its answer at once, after the (short) run; its first token is that run.
# Target (issue #22): first token with the extractive provider <= 150 ms p95.
"""Time to first token of streamed answers.

.venv/bin/python bench/streaming.py [--rounds N] [--out TXT]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import setup_django  # noqa: E402
from bench.pipeline import legalbench_setup, row  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "bench" / "results-streaming.txt"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2, help="passes over the 83 queries")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    setup_django()

    from rag.pipeline.run import stream_query
    from rag.pipeline.streaming import AnswerDelta, GenerationStarted

    queries, corpus, reader = legalbench_setup()
    tenant = corpus.tenant

    def stream(question: str, **options) -> dict:
        """ms to the first delta, from the generation's start to it, and to the end."""
        started = time.perf_counter()
        ctx, events = stream_query(tenant=tenant, question=question, reader=reader, **options)
        generating = first = None
        for event in events:
            now = time.perf_counter()
            if isinstance(event, GenerationStarted):
                generating = now
            elif isinstance(event, AnswerDelta) and first is None:
                first = now
        done = time.perf_counter()
        first = first or done  # no delta from the model (cache hit, nothing found): the answer at once
        return {
            "first": (first - started) * 1000,
            "model_first": (first - generating) * 1000 if generating else None,
            "complete": (done - started) * 1000,
            "cache_hit": ctx.cache_hit,
        }

    for question in queries:  # warm-up: models loaded, term statistics built, connections open
        stream(question, use_cache=False)
    uncached = [stream(q, use_cache=False) for _ in range(args.rounds) for q in queries]
    for question in queries:  # store every answer once
        stream(question)
    hits = [stream(q) for _ in range(args.rounds) for q in queries]
    assert all(hit["cache_hit"] for hit in hits), "expected cache hits"

    lines = [
        f"Streamed answers, extractive provider, {len(corpus.paths)} CUAD contracts, "
        f"{len(queries)} distinct dev queries x {args.rounds} rounds (ms)",
        "",
        f"  {'':<24} {'p50':>9} {'p95':>9} {'mean':>9} {'max':>9}",
        row("first token (uncached)", [r["first"] for r in uncached]),
        row("model first token", [r["model_first"] for r in uncached if r["model_first"] is not None]),
        row("complete (uncached)", [r["complete"] for r in uncached]),
        row("first token (cache hit)", [r["first"] for r in hits]),
        "",
        "target: first token with the extractive provider <= 150 ms p95",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
