#!/usr/bin/env python
# Streamed answers: when each event reaches the client, a benchmark that prints figures (it is not a test).
#
# `POST /api/v1/rag/query` with `"stream": true`, through Django's whole request stack in this
# process (URL routing, API-key authentication, throttling, middleware, the view, the event
# stream; django.test.Client reading the response event by event), with the offline extractive
# provider over the 29 LegalBench-RAG CUAD contracts (ingested on first use) for the 83 distinct
# dev queries, uncached, after a warm-up pass. Per query, from the moment the request is made:
#   - meta: the first event (the question passed its checks; nothing searched yet);
#   - sources: the passages chosen, the model about to write (search, rank, rerank, context, prompt);
#   - first text: the first answer delta, the figure a reader waits for;
#   - model first text: from `sources` to the first delta (the provider's own time to first text);
#   - complete: the `result` event, the verified answer (the audit row follows as the response ends).
# A cache hit streams its whole answer at once.
# Targets (issue #37, item 4): meta <= 100 ms p95, first text <= 400 ms p95 uncached.
"""When the events of streamed answers arrive.

.venv/bin/python bench/streaming.py [--rounds N] [--out TXT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import setup_django  # noqa: E402
from bench.pipeline import legalbench_setup, row  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "bench" / "results-streaming.txt"
QUERY_URL = "/api/v1/rag/query"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2, help="passes over the 83 queries")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    # Throttling stays on (its Redis round trip is part of the cost) but cannot trip.
    os.environ.setdefault("API_THROTTLE_TENANT_RATE", "100000000/min")
    os.environ.setdefault("API_THROTTLE_CLIENT_RATE", "100000000/min")
    setup_django()

    from django.test import Client

    from tenants import services
    from tenants.models import Role

    queries, corpus, _ = legalbench_setup()
    _, key = services.api_key_create(
        tenant=corpus.tenant, name="streaming benchmark", role=Role.ADMIN, created_via="bench"
    )
    client = Client(HTTP_AUTHORIZATION=f"Api-Key {key}", SERVER_NAME="127.0.0.1")

    def stream(question: str, **options) -> dict:
        """ms from the request to each event."""
        started = time.perf_counter()
        response = client.post(
            QUERY_URL, {"query": question, "stream": True, **options}, content_type="application/json"
        )
        assert response.status_code == 200 and response.streaming, response.content[:300]
        arrived: dict[str, float] = {}
        cache_hit = False
        for chunk in response.streaming_content:
            head, _, data = chunk.partition(b"\n")
            name = head.removeprefix(b"event: ").decode()
            arrived.setdefault(name, (time.perf_counter() - started) * 1000)
            if name == "result":
                cache_hit = json.loads(data.removeprefix(b"data: "))["flags"]["cache_hit"]
        response.close()  # the audit row, as a WSGI server does
        assert "result" in arrived, f"no result for {question!r}: {sorted(arrived)}"
        first = arrived.get("delta", arrived["result"])  # nothing to say: the result is the first text
        return {
            "meta": arrived["meta"],
            "sources": arrived["sources"],
            "first": first,
            "model_first": first - arrived["sources"] if "delta" in arrived else None,
            "complete": arrived["result"],
            "cache_hit": cache_hit,
        }

    for question in queries:  # warm-up: models loaded, term statistics built, connections open
        stream(question, use_cache=False)
    uncached = [stream(q, use_cache=False) for _ in range(args.rounds) for q in queries]
    for question in queries:  # store every answer once
        stream(question)
    hits = [stream(q) for _ in range(args.rounds) for q in queries]
    assert all(hit["cache_hit"] for hit in hits), "expected cache hits"
    assert not any(run["cache_hit"] for run in uncached), "expected uncached runs"

    lines = [
        f"Streamed answers through the API (in-process client), extractive provider, {len(corpus.paths)} "
        f"CUAD contracts, {len(queries)} distinct dev queries x {args.rounds} rounds (ms)",
        "",
        f"  {'':<24} {'p50':>9} {'p95':>9} {'mean':>9} {'max':>9}",
        row("meta (uncached)", [r["meta"] for r in uncached]),
        row("sources (uncached)", [r["sources"] for r in uncached]),
        row("first text (uncached)", [r["first"] for r in uncached]),
        row("model first text", [r["model_first"] for r in uncached if r["model_first"] is not None]),
        row("complete (uncached)", [r["complete"] for r in uncached]),
        row("meta (cache hit)", [r["meta"] for r in hits]),
        row("complete (cache hit)", [r["complete"] for r in hits]),
        "",
        "targets (issue #37): meta <= 100 ms p95; first text <= 400 ms p95 uncached",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
