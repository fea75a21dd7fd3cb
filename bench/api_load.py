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
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import serve, setup_django  # noqa: E402

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
    _, key = services.api_key_create(
        tenant=tenant, name="api_load benchmark", role=Role.VIEWER, created_via="bench"
    )
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
    return serve(env, port=port, workers=workers, threads=threads)


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


class Connection:
    """One keep-alive client connection (reopened if the server closes it)."""

    def __init__(self, port: int):
        self.port = port
        self.reader = self.writer = None

    async def send(self, request: bytes, out: dict, started: float) -> None:
        """Send `request`, record its latency since `started` (perf_counter) or its error."""
        try:
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            self.writer.write(request)
            await self.writer.drain()
            status, keep_alive = await read_response(self.reader)
        except (OSError, asyncio.IncompleteReadError) as exc:
            out["errors"].append(type(exc).__name__)
            self.close()
            return
        out["latencies"].append((time.perf_counter() - started) * 1000)
        if status != 200:
            out["errors"].append(str(status))
        if not keep_alive:
            self.close()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def closed_loop(port: int, requests: list[bytes], clients: int, seconds: float, limit: int) -> dict:
    """`clients` connections, each sending its next request as soon as the last one is answered."""
    out = {"latencies": [], "errors": []}
    sent = [0]
    stop_at = time.monotonic() + seconds

    async def run(offset: int) -> None:
        connection = Connection(port)
        i = offset
        while time.monotonic() < stop_at and sent[0] < limit:
            sent[0] += 1
            await connection.send(requests[i % len(requests)], out, time.perf_counter())
            i += 1
        connection.close()

    started = time.monotonic()
    await asyncio.gather(*(run(n) for n in range(clients)))
    out["elapsed"] = time.monotonic() - started
    return out


async def fixed_rate(port: int, requests: list[bytes], clients: int, rate: float, seconds: float) -> dict:
    """Requests scheduled every 1/`rate` s over at most `clients` connections. Latency counts from
    the scheduled time, so a request waiting for a free connection is measured as late, as a
    user would see it (no coordinated omission)."""
    out = {"latencies": [], "errors": []}
    idle: asyncio.Queue[Connection] = asyncio.Queue()
    for _ in range(clients):
        idle.put_nowait(Connection(port))

    async def one(request: bytes, scheduled: float) -> None:
        connection = await idle.get()
        await connection.send(request, out, scheduled)
        idle.put_nowait(connection)

    tasks = []
    begin = time.perf_counter()
    for n in range(int(rate * seconds)):
        scheduled = begin + n / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(requests[n % len(requests)], scheduled)))
    await asyncio.gather(*tasks)
    out["elapsed"] = time.perf_counter() - begin
    while not idle.empty():
        idle.get_nowait().close()
    return out


# --- CPU accounting: who spends the two cores (from /proc) -----------------------------------------


def _cpu_seconds(pid: int, *, with_exited_children: bool = False) -> float:
    """CPU time of `pid`; with its waited-for children's too (the postmaster's exited backends:
    a connection past DB_CONN_MAX_AGE is closed and its replacement starts mid-phase)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if with_exited_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def machine_speed_ms() -> float:
    """Milliseconds of a fixed pure-Python workload (best of 3): this VM's speed varies from run to
    run by up to 2x, so results are only comparable next to it."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        sum(i * i % 7 for i in range(1_000_000))
        best = min(best, time.process_time() - started)
    return best * 1000


def steal_share(before: list[int], after: list[int]) -> float:
    """The share of CPU time the hypervisor gave to others between two /proc/stat readings."""
    spent = [b - a for a, b in zip(before, after, strict=True)]
    return spent[7] / max(1, sum(spent))


def cpu_counters() -> list[int]:
    return [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


def _children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def process_groups(server: subprocess.Popen) -> dict[str, list[int]]:
    """The processes of each part: gunicorn workers, PostgreSQL (postmaster and backends), Redis."""
    from django.conf import settings

    groups = {"web": _children(server.pid), "database": [], "redis": []}
    postmaster = Path(settings.EMBEDDED_PG_DATA_DIR) / "postmaster.pid"
    if not settings.DATABASE_URL and postmaster.exists():
        master = int(postmaster.read_text().split()[0])
        groups["database"] = [-master, *_children(master)]  # negative: count its exited children too
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and (proc / "comm").exists():
            try:
                if (proc / "comm").read_text().strip() == "redis-server":
                    groups["redis"].append(int(proc.name))
            except OSError:
                pass
    return groups


def cpu_snapshot(groups: dict[str, list[int]]) -> dict[str, dict[int, float]]:
    snapshot = {
        name: {pid: _cpu_seconds(abs(pid), with_exited_children=pid < 0) for pid in pids}
        for name, pids in groups.items()
    }
    snapshot["load generator"] = {os.getpid(): sum(os.times()[:2])}
    return snapshot


def measured(groups: dict[str, list[int]], run) -> dict:
    """Run a phase and add the CPU milliseconds each part spent per answered request (processes
    that exited meanwhile, such as a closed database connection's backend, are left out)."""
    before = cpu_snapshot(groups)
    result = run()
    after = cpu_snapshot(groups)
    answered = max(1, len(result["latencies"]))
    result["cpu_ms"] = {
        name: sum(max(0.0, after[name].get(pid, 0.0) - spent) for pid, spent in pids.items())
        * 1000
        / answered
        for name, pids in before.items()
    }
    return result


def row(name: str, result: dict) -> str:
    latencies = result["latencies"]
    rate = len(latencies) / result["elapsed"]
    p50, p95, p99 = (percentile(latencies, q) for q in (50, 95, 99))
    counts = f"{name:<22} {len(latencies):>8} {len(result['errors']):>7} {rate:>9.1f}"
    cpu = result["cpu_ms"]
    spent = " ".join(f"{cpu[part]:>6.2f}" for part in ("web", "database", "redis", "load generator"))
    return f"{counts} {p50:>8.1f} {p95:>8.1f} {p99:>8.1f}   {spent}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0, help="per phase")
    parser.add_argument("--max-requests", type=int, default=20000, help="per closed-loop phase")
    parser.add_argument("--rate", type=float, default=300.0, help="requests/s of the fixed-rate phase")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    key = prepare()
    speed_before, counters_before = machine_speed_ms(), cpu_counters()
    port = free_port()
    server = start_gunicorn(port, args.workers, args.threads)
    try:
        cached = [request_bytes(port, key, {"query": q}) for q in QUESTIONS]
        uncached = [request_bytes(port, key, {"query": q, "use_cache": False}) for q in QUESTIONS]
        # Warm-up: every worker loads the embedding model and the term statistics; every question
        # is answered once, so the cache-hit phases are all hits.
        warm = args.workers * args.threads
        asyncio.run(closed_loop(port, uncached, warm, 60, warm * 4))
        asyncio.run(closed_loop(port, cached, 1, 60, len(cached)))
        groups = process_groups(server)  # after the warm-up: every database backend exists by now
        c, s_, n = args.clients, args.seconds, args.max_requests
        results = {
            f"cache hit, {c} clients": measured(
                groups, lambda: asyncio.run(closed_loop(port, cached, c, s_, n))
            ),
            f"cache hit, {args.rate:.0f}/s": measured(
                groups, lambda: asyncio.run(fixed_rate(port, cached, c, args.rate, s_))
            ),
            f"uncached, {c} clients": measured(
                groups, lambda: asyncio.run(closed_loop(port, uncached, c, s_, n))
            ),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)

    load, steal = os.getloadavg()[0], steal_share(counters_before, cpu_counters())
    speed = (speed_before + machine_speed_ms()) / 2
    lines = [
        f"API load: gunicorn {args.workers} workers x {args.threads} threads (gthread), up to "
        f"{args.clients} connections on loopback, {args.seconds:.0f} s per phase, {os.cpu_count()} cores, "
        f"load average {load:.1f} at the end",
        f"machine: reference Python loop {speed:.0f} ms (lower is faster), CPU stolen by the "
        f"hypervisor {steal:.0%} during the run",
        f"{'phase':<22} {'requests':>8} {'errors':>7} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}"
        "   CPU ms per request: web, database, redis, load generator",
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
