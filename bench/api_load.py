#!/usr/bin/env python
# API load benchmark: prints figures, it is not a test.
#
# gunicorn serves the app (N workers, gthread, keep-alive) on loopback; an asyncio load generator
# in this process keeps C clients busy, each on its own keep-alive connection, sending
# POST /api/v1/rag/query with an API key (authentication, throttling, the pipeline, the audit row
# and the metrics all run as in production). Two phases, each bounded by time and count:
#   1. cache hit: questions asked once beforehand, asked again and again;
#   2. uncached: the same questions with use_cache=false (the offline extractive provider).
# Printed per phase: requests, errors, requests/s, p50/p95/p99 latency. Target (issue #6):
# cache-hit throughput >= 300 requests/s with p95 <= 50 ms at 20 clients, 0 errors.
"""API load benchmark.

.venv/bin/python bench/api_load.py [--workers N] [--threads T] [--clients C] [--seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import setup_django  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "bench" / "results-api-load.txt"
TENANT = ("bench-api", "Benchmark Firm LLP")
QUESTIONS = [
    "What law governs the distributor agreement?",
    "How can the consulting agreement be terminated?",
    "What are the payment terms of the maintenance agreement?",
    "Is there a confidentiality clause in the marketing agreement?",
    "Who owns the intellectual property under the co-branding agreement?",
    "What is the term of the distributor agreement?",
    "Does the consulting agreement limit liability?",
    "What notice is required to terminate the maintenance agreement?",
    "Can the marketing agreement be assigned?",
    "What territory does the distributor agreement cover?",
    "What fees does the consultant receive?",
    "Which party indemnifies the other in the co-branding agreement?",
    "What warranties does the maintenance provider give?",
    "Is there a non-compete clause?",
    "How are disputes resolved under the consulting agreement?",
    "What insurance must the distributor carry?",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def prepare() -> str:
    """The benchmark tenant with the demo documents, and a fresh viewer API key for it."""
    setup_django()
    from django.core.management import call_command

    from ragsite import demo
    from tenants import services
    from tenants.models import Role, Tenant

    call_command("migrate", verbosity=0)
    tenant = Tenant.objects.filter(slug=TENANT[0]).first() or services.tenant_create(
        slug=TENANT[0], name=TENANT[1]
    )
    summary = demo.demo_documents_load(tenant=tenant, report=lambda line: print(line, flush=True))
    if summary.failed:
        raise SystemExit("demo documents failed to load")
    _, key = services.api_key_create(tenant=tenant, name="api_load benchmark", role=Role.VIEWER)
    return key


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(port: int, workers: int, threads: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ragsite.settings.local",
        "DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        # Throttling stays on (its Redis round trip is part of the cost) but cannot trip.
        "API_THROTTLE_TENANT_RATE": "100000000/min",
        "API_THROTTLE_CLIENT_RATE": "100000000/min",
        # Metrics in multi-process mode, as in production (each worker writes its own files).
        "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="lexrag-bench-metrics-"),
    }
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--config=python:ragsite.gunicorn_conf",
        "ragsite.wsgi:application",
        f"--workers={workers}",
        f"--threads={threads}",
        f"--bind=127.0.0.1:{port}",
        "--keep-alive=30",
        "--log-level=warning",
    ]
    server = subprocess.Popen(command, cwd=REPO_ROOT, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=5) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise SystemExit("gunicorn did not become healthy")


def request_bytes(port: int, key: str, body: dict) -> bytes:
    payload = json.dumps(body).encode()
    head = (
        f"POST /api/v1/rag/query HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Api-Key {key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: keep-alive\r\n\r\n"
    )
    return head.encode() + payload


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """(status, keep_alive) of one HTTP/1.1 response, its body read and discarded."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers.get("connection", "").lower() != "close"


async def client(port: int, requests: list[bytes], offset: int, stop_at: float, budget: list[int], out: dict):
    reader = writer = None
    i = offset
    while time.monotonic() < stop_at and budget[0] > 0:
        budget[0] -= 1
        if writer is None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        started = time.perf_counter()
        try:
            writer.write(requests[i % len(requests)])
            await writer.drain()
            status, keep_alive = await read_response(reader)
        except (OSError, asyncio.IncompleteReadError) as exc:
            out["errors"].append(type(exc).__name__)
            writer.close()
            writer = None
            continue
        out["latencies"].append((time.perf_counter() - started) * 1000)
        if status != 200:
            out["errors"].append(str(status))
        if not keep_alive:
            writer.close()
            writer = None
        i += 1
    if writer is not None:
        writer.close()


async def phase(port: int, requests: list[bytes], clients: int, seconds: float, max_requests: int) -> dict:
    out = {"latencies": [], "errors": []}
    budget = [max_requests]
    started = time.monotonic()
    await asyncio.gather(*(client(port, requests, n, started + seconds, budget, out) for n in range(clients)))
    out["elapsed"] = time.monotonic() - started
    return out


def row(name: str, result: dict) -> str:
    latencies = result["latencies"]
    rate = len(latencies) / result["elapsed"]
    p50, p95, p99 = (percentile(latencies, q) for q in (50, 95, 99))
    counts = f"{name:<10} {len(latencies):>8} {len(result['errors']):>7} {rate:>9.1f}"
    return f"{counts} {p50:>8.1f} {p95:>8.1f} {p99:>8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0, help="per phase")
    parser.add_argument("--max-requests", type=int, default=20000, help="per phase")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    key = prepare()
    port = free_port()
    server = start_gunicorn(port, args.workers, args.threads)
    try:
        cached = [request_bytes(port, key, {"query": q}) for q in QUESTIONS]
        uncached = [request_bytes(port, key, {"query": q, "use_cache": False}) for q in QUESTIONS]
        # Warm-up: every worker loads the embedding model and the term statistics; every question
        # is answered once, so phase 1 is all cache hits.
        asyncio.run(phase(port, uncached, args.workers * args.threads, 60, args.workers * args.threads * 4))
        asyncio.run(phase(port, cached, 1, 60, len(cached)))
        results = {
            "cache hit": asyncio.run(phase(port, cached, args.clients, args.seconds, args.max_requests)),
            "uncached": asyncio.run(phase(port, uncached, args.clients, args.seconds, args.max_requests)),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)

    load = os.getloadavg()[0]
    lines = [
        f"API load: gunicorn {args.workers} workers x {args.threads} threads (gthread), "
        f"{args.clients} clients on loopback, {args.seconds:.0f} s per phase, {os.cpu_count()} cores, "
        f"load average {load:.1f}",
        f"{'phase':<10} {'requests':>8} {'errors':>7} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}",
        *(row(name, result) for name, result in results.items()),
    ]
    for name, result in results.items():
        if result["errors"]:
            lines.append(f"{name} errors: {sorted(set(result['errors']))}")
    text = "\n".join(lines)
    print(text)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
