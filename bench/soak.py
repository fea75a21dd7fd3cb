#!/usr/bin/env python
# Soak benchmark: prints figures, it is not a test.
#
# gunicorn (ragsite/gunicorn_conf.py) and a Celery worker (prefork, concurrency 1, as in
# docker-compose) run on loopback against the real PostgreSQL and Redis, in a database and a queue
# of their own. Several client threads, each on its own keep-alive connection, send mixed traffic
# for a bounded time: uploads of small generated contracts (TXT and PDF), sync queries (some asked
# again and again: cache hits), async query jobs, and polls of documents and jobs. Then uploads and
# jobs are given time to finish. Target (issue #9): 0 errors, 0 lost documents, RSS growth of the
# web and worker processes < 10 % after warm-up.
"""Soak benchmark: mixed API traffic against gunicorn + a Celery worker for a bounded time.

.venv/bin/python bench/soak.py [--seconds S] [--warmup S] [--clients C] [--workers N] [--threads T]
                               [--upload-interval S] [--drain S] [--out TXT]
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.api_load import _children, free_port, machine_speed_ms, percentile  # noqa: E402
from bench.common import serve, setup_django  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "bench" / "results-soak.txt"
TENANT = ("bench-soak", "Soak Test Firm LLP")
# Apart from everyone else on the shared PostgreSQL server and Redis: a database, a Celery queue
# and cache keys of its own (tenant ids restart at 1 in every database, so cache keys would clash).
SOAK_ENV = {
    "EMBEDDED_PG_DATABASE": "lexrag_soak",
    "CELERY_TASK_DEFAULT_QUEUE": f"lexrag-soak-{os.getpid()}",
    "CACHE_KEY_PREFIX": "lexrag-soak",
    "MEDIA_ROOT": str(REPO_ROOT / "var" / "soak-media"),
    "DJANGO_SETTINGS_MODULE": "ragsite.settings.local",
    "DEBUG": "false",
    "LOG_LEVEL": "WARNING",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "CELERY_TASK_ALWAYS_EAGER": "false",
    # Throttling stays on (its Redis round trip is part of the cost) but cannot trip.
    "API_THROTTLE_TENANT_RATE": "100000000/min",
    "API_THROTTLE_CLIENT_RATE": "100000000/min",
}
# Asked again and again: after the first answer they are cache hits until an upload changes the index.
REPEATED_QUESTIONS = [
    "What law governs the distributor agreement?",
    "How can the consulting agreement be terminated?",
    "What are the payment terms of the maintenance agreement?",
    "Is there a confidentiality clause in the marketing agreement?",
    "Who owns the intellectual property under the co-branding agreement?",
    "What notice is required to terminate the maintenance agreement?",
]
TOPICS = ["termination", "payment", "confidentiality", "governing law", "indemnification", "assignment"]
PARTIES = ["Acme Corp", "Globex LLC", "Initech Inc.", "Umbrella Holdings", "Stark Supply Co.", "Wayne Foods"]
STATES = ["Delaware", "New York", "California", "Texas", "Illinois"]
# Shares of the traffic (an upload is skipped when the last one was under --upload-interval ago).
MIX = {
    "upload": 0.06,
    "query cached": 0.34,
    "query uncached": 0.14,
    "query async": 0.10,
    "poll document": 0.18,
    "poll job": 0.18,
}
EXPECTED_STATUS = {
    "upload": {201},
    "query cached": {200},
    "query uncached": {200},
    "query async": {202},
    "poll document": {200},
    "poll job": {200},
}


# --- Generated contracts ---------------------------------------------------------------------------


def contract_text(rng: random.Random, serial: int) -> str:
    """A short contract, different every time (a duplicate upload would not be ingested again)."""
    a, b = rng.sample(PARTIES, 2)
    state, days, fee = rng.choice(STATES), rng.choice([15, 30, 45, 60, 90]), rng.randint(1_000, 90_000)
    clauses = [
        f"SERVICES AGREEMENT No. {serial}-{uuid.uuid4().hex[:8]}",
        f'This Services Agreement (the "Agreement") is made between {a} ("Provider") and {b} ("Client").',
        f"1. Term. The Agreement starts on the Effective Date and continues for {rng.randint(1, 5)} years.",
        f"2. Fees. Client shall pay Provider ${fee:,} per month within {days} days of each invoice.",
        f"3. Termination. Either party may terminate this Agreement on {days} days' written notice.",
        "4. Confidentiality. Each party shall keep the other's Confidential Information secret for "
        f"{rng.randint(2, 7)} years after termination.",
        f"5. Governing Law. This Agreement is governed by the laws of the State of {state}.",
        f"6. Indemnification. {a} shall indemnify {b} against third-party claims arising from its services.",
        "7. Assignment. Neither party may assign this Agreement without the other party's prior written "
        "consent.",
    ]
    body = clauses[1:]
    rng.shuffle(body)  # the same clauses in another order: passages differ from upload to upload
    return "\n\n".join([clauses[0], *body]) + "\n"


def contract_pdf(text: str) -> bytes:
    """The text as a one- or two-page PDF with a text layer (fpdf2, a dev dependency)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for paragraph in text.split("\n\n"):
        pdf.multi_cell(0, 6, paragraph.replace("\u2019", "'"))
        pdf.ln(3)
    return bytes(pdf.output())


def multipart(filename: str, content: bytes, content_type: str, fields: dict[str, str]) -> tuple[bytes, str]:
    boundary = f"soak{uuid.uuid4().hex}"
    body = io.BytesIO()
    for name, value in fields.items():
        body.write(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        )
    body.write(
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{filename}"\r\n'
        f"Content-Type: {content_type}\r\n\r\n".encode()
    )
    body.write(content + f"\r\n--{boundary}--\r\n".encode())
    return body.getvalue(), f"multipart/form-data; boundary={boundary}"


# --- Set-up ------------------------------------------------------------------------------------------


def redis_url() -> str:
    """REDIS_URL, else the local Redis if it answers: a soak without the real broker and cache
    would run tasks eagerly inside the web workers and measure something else."""
    url = os.environ.get("REDIS_URL", "")
    if not url:
        try:
            with socket.create_connection(("127.0.0.1", 6379), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    url = "redis://127.0.0.1:6379/0"
        except OSError:
            pass
    if not url:
        raise SystemExit("no Redis: set REDIS_URL (the soak needs the real broker and cache)")
    return url


def prepare() -> tuple[str, int]:
    """The soak tenant with the demo documents (kept between runs), a fresh case for this run's
    uploads, and a member API key (members upload)."""
    SOAK_ENV["REDIS_URL"] = redis_url()
    os.environ.update(SOAK_ENV)
    setup_django()
    from django.core.management import call_command

    from rag import services as rag_services
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
    case = rag_services.case_get_or_create(tenant=tenant, name=f"Soak run {time.strftime('%Y%m%d-%H%M%S')}")
    _, key = services.api_key_create(
        tenant=tenant, name="soak benchmark", role=Role.MEMBER, created_via="bench"
    )
    return key, case.pk


def start_gunicorn(port: int, workers: int, threads: int) -> subprocess.Popen:
    env = {
        **os.environ,
        **SOAK_ENV,
        "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="lexrag-soak-metrics-"),
    }
    return serve(env, port=port, workers=workers, threads=threads)


def start_worker() -> subprocess.Popen:
    """The production worker's shape (docker-compose): prefork pool, one process, on the soak queue."""
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "ragsite",
        "worker",
        "--concurrency=1",
        "--loglevel=WARNING",
        f"--queues={SOAK_ENV['CELERY_TASK_DEFAULT_QUEUE']}",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    return subprocess.Popen(command, cwd=REPO_ROOT, env={**os.environ, **SOAK_ENV})


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


# --- Memory ------------------------------------------------------------------------------------------


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def memory(server: subprocess.Popen, worker: subprocess.Popen) -> dict[str, dict[int, float]]:
    """RSS (MB) of each gunicorn worker, and of the Celery main process and its pool child."""
    return {
        "web": {pid: rss_mb(pid) for pid in _children(server.pid)},
        "worker": {pid: rss_mb(pid) for pid in [worker.pid, *_children(worker.pid)]},
    }


# --- Traffic -----------------------------------------------------------------------------------------


class Stats:
    """What the clients saw, shared between their threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter = Counter()
        self.error_examples: dict[tuple[str, str], str] = {}
        self.cache_hits = Counter()
        self.documents: list[int] = []
        self.jobs: list[str] = []
        self.last_upload = 0.0
        self.serial = 0

    def record(self, kind: str, ms: float, status: int | str, body: bytes) -> None:
        with self.lock:
            self.latencies[kind].append(ms)
            if status not in EXPECTED_STATUS[kind]:
                self.errors[(kind, str(status))] += 1
                self.error_examples.setdefault((kind, str(status)), body[:300].decode("utf-8", "replace"))

    def may_upload(self, interval: float) -> int | None:
        """The next upload's serial number, if the last upload was `interval` s ago or more."""
        with self.lock:
            now = time.monotonic()
            if now - self.last_upload < interval:
                return None
            self.last_upload, self.serial = now, self.serial + 1
            return self.serial


class Client:
    """One API client on its own keep-alive connection (reopened when the server closes it)."""

    def __init__(self, port: int, key: str, case_id: int, stats: Stats, seed: int, upload_interval: float):
        self.port, self.case_id, self.stats = port, case_id, stats
        self.headers = {"Authorization": f"Api-Key {key}"}
        self.rng = random.Random(seed)  # noqa: S311  (a reproducible traffic mix, not a secret)
        self.upload_interval = upload_interval
        self.connection: http.client.HTTPConnection | None = None

    def request(self, kind: str, method: str, path: str, body: bytes | None = None, content_type: str = ""):
        headers = dict(self.headers)
        if content_type:
            headers["Content-Type"] = content_type
        started = time.perf_counter()
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
            status = response.status
            if response.getheader("Connection", "").lower() == "close":
                self.close()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            status, data = type(exc).__name__, str(exc).encode()
        self.stats.record(kind, (time.perf_counter() - started) * 1000, status, data)
        return status, data

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
        self.connection = None

    def query(self, kind: str, payload: dict) -> None:
        status, data = self.request(
            kind, "POST", "/api/v1/rag/query", json.dumps(payload).encode(), "application/json"
        )
        if status == 200 and kind != "query async":
            hit = bool(json.loads(data)["flags"]["cache_hit"])
            with self.stats.lock:
                self.stats.cache_hits[(kind, hit)] += 1
        elif status == 202:
            with self.stats.lock:
                self.stats.jobs.append(json.loads(data)["job_id"])

    def upload(self, serial: int) -> None:
        text = contract_text(self.rng, serial)
        if serial % 2:
            name, content, mime = f"soak-{serial}.pdf", contract_pdf(text), "application/pdf"
        else:
            name, content, mime = f"soak-{serial}.txt", text.encode(), "text/plain"
        body, content_type = multipart(
            name, content, mime, {"doc_type": "contract", "jurisdiction": "Delaware"}
        )
        status, data = self.request(
            "upload", "POST", f"/api/v1/rag/cases/{self.case_id}/documents", body, content_type
        )
        if status == 201:
            with self.stats.lock:
                self.stats.documents.extend(document["id"] for document in json.loads(data)["documents"])

    def step(self) -> None:
        kind = self.rng.choices(list(MIX), weights=list(MIX.values()))[0]
        if kind == "upload":
            serial = self.stats.may_upload(self.upload_interval)
            if serial is None:
                kind = "query cached"
            else:
                return self.upload(serial)
        with self.stats.lock:
            document = self.rng.choice(self.stats.documents) if self.stats.documents else None
            job = self.rng.choice(self.stats.jobs) if self.stats.jobs else None
        if kind == "poll document" and document:
            self.request(kind, "GET", f"/api/v1/rag/documents/{document}")
        elif kind == "poll job" and job:
            self.request(kind, "GET", f"/api/v1/rag/jobs/{job}")
        elif kind == "query uncached":
            topic, party = self.rng.choice(TOPICS), self.rng.choice(PARTIES)
            self.query(
                kind, {"query": f"What does the {party} agreement say about {topic}?", "use_cache": False}
            )
        elif kind == "query async":
            self.query(
                kind, {"query": self.rng.choice(REPEATED_QUESTIONS), "mode": "async", "use_cache": False}
            )
        else:  # cached, or a poll with nothing to poll yet
            self.query("query cached", {"query": self.rng.choice(REPEATED_QUESTIONS)})

    def run(self, stop_at: float) -> None:
        while time.monotonic() < stop_at:
            self.step()
            time.sleep(self.rng.uniform(0.05, 0.25))  # a person or an integration, not a flood
        self.close()


def warm_up(port: int, key: str, case_id: int, concurrency: int) -> None:
    """Before the clock starts: every web worker loads the embedding model (concurrent uncached
    queries), and the Celery worker loads it too (one upload and one async job, waited for)."""
    stats = Stats()
    clients = [Client(port, key, case_id, stats, n, 0.0) for n in range(concurrency)]
    for _ in range(2):
        threads = [
            threading.Thread(target=c.query, args=("query uncached", {"query": q, "use_cache": False}))
            for c, q in zip(clients, REPEATED_QUESTIONS * 2, strict=False)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    clients[0].upload(0)
    clients[0].query("query async", {"query": REPEATED_QUESTIONS[0], "mode": "async"})
    for client in clients:
        client.close()
    documents, jobs, _ = drain(stats, 300)
    if stats.errors or documents.get("ready") != 1 or jobs.get("succeeded") != 1:
        raise SystemExit(f"warm-up failed: {dict(stats.errors)} {stats.error_examples} {documents} {jobs}")


def drain(stats: Stats, seconds: float) -> tuple[Counter, Counter, float]:
    """Wait (at most `seconds`) until every uploaded document and every job has finished; their
    final status counts and how long the wait was."""
    from django.db import connection

    from rag.models import Document, DocumentStatus, JobStatus, QueryJob

    finished_documents = {DocumentStatus.READY, DocumentStatus.FAILED}
    finished_jobs = {JobStatus.SUCCEEDED, JobStatus.FAILED}
    started = time.monotonic()
    while True:
        documents = Counter(Document.objects.filter(pk__in=stats.documents).values_list("status", flat=True))
        jobs = Counter(QueryJob.objects.filter(job_id__in=stats.jobs).values_list("status", flat=True))
        done = set(documents) <= finished_documents and set(jobs) <= finished_jobs
        if done or time.monotonic() - started > seconds:
            connection.close()
            return documents, jobs, time.monotonic() - started
        time.sleep(2)


# --- Report ------------------------------------------------------------------------------------------


def growth(before: dict[int, float], after: dict[int, float]) -> str:
    total_before, total_after = sum(before.values()), sum(after.get(pid, 0.0) for pid in before)
    change = (total_after - total_before) / max(total_before, 1e-9) * 100
    gone = [pid for pid in before if pid not in after or not after[pid]]
    each = ", ".join(f"{before[pid]:.0f} -> {after.get(pid, 0.0):.0f}" for pid in before)
    return f"{total_before:.0f} -> {total_after:.0f} MB ({change:+.1f} %; per process {each})" + (
        f"; processes gone: {gone}" if gone else ""
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=300.0, help="traffic, warm-up included")
    parser.add_argument("--warmup", type=float, default=60.0, help="memory is compared from here on")
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--upload-interval", type=float, default=3.0, help="at most one upload per S seconds")
    parser.add_argument(
        "--drain", type=float, default=300.0, help="most seconds to wait for uploads and jobs"
    )
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    key, case_id = prepare()
    speed_before = machine_speed_ms()
    port = free_port()
    worker = start_worker()
    server = start_gunicorn(port, args.workers, args.threads)
    stats, samples = Stats(), []
    try:
        warm_up(port, key, case_id, args.workers * args.threads + 2)
        began = time.monotonic()
        stop_at = began + args.seconds
        clients = [
            Client(port, key, case_id, stats, args.seed + n, args.upload_interval)
            for n in range(args.clients)
        ]
        threads = [threading.Thread(target=c.run, args=(stop_at,), daemon=True) for c in clients]
        for thread in threads:
            thread.start()
        warm = None
        while any(thread.is_alive() for thread in threads):
            # Every 5 s, and once more as soon as the clients stop (not up to 5 s later).
            time.sleep(min(5.0, max(0.2, stop_at - time.monotonic())))
            elapsed = time.monotonic() - began
            sample = memory(server, worker)
            samples.append((elapsed, sample))
            if warm is None and elapsed >= args.warmup:
                warm = (elapsed, sample)
            with stats.lock:
                answered = sum(len(v) for v in stats.latencies.values())
                errors = sum(stats.errors.values())
            print(
                f"  {elapsed:5.0f} s  {answered:6} requests  {errors} errors  "
                f"{len(stats.documents)} uploaded  "
                f"web {sum(sample['web'].values()):.0f} MB  worker {sum(sample['worker'].values()):.0f} MB",
                flush=True,
            )
        for thread in threads:
            thread.join()
        end = memory(server, worker)
        traffic_seconds = time.monotonic() - began
        documents, jobs, waited = drain(stats, args.drain)
        after_drain = memory(server, worker)
    finally:
        stop(server)
        stop(worker)
    warm = warm or samples[0]

    load = os.getloadavg()[0]
    speed = (speed_before + machine_speed_ms()) / 2
    lines = [
        f"Soak: {traffic_seconds:.0f} s of mixed traffic from {args.clients} client threads (keep-alive, "
        f"0.05-0.25 s think time), gunicorn {args.workers} workers x {args.threads} threads + one Celery "
        "worker (prefork, concurrency 1), real PostgreSQL (database lexrag_soak) and Redis (own queue "
        "and cache prefix), offline extractive model",
        f"machine: {os.cpu_count()} cores, shared by the load generator, web, worker, PostgreSQL and Redis "
        f"(and whatever else runs); load average {load:.1f} at the end; reference Python loop {speed:.0f} ms "
        "(lower is faster)",
        f"uploads: at most one per {args.upload_interval:.0f} s, TXT and PDF (one to two pages) alternating",
        "",
        f"{'kind':<16} {'requests':>8} {'errors':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}",
    ]
    for kind in EXPECTED_STATUS:
        values = stats.latencies.get(kind, [])
        errors = sum(n for (k, _), n in stats.errors.items() if k == kind)
        if values:
            lines.append(
                f"{kind:<16} {len(values):>8} {errors:>7} {percentile(values, 50):>8.1f} "
                f"{percentile(values, 95):>8.1f} {max(values):>8.1f}"
            )
    total = sum(len(v) for v in stats.latencies.values())
    error_total = sum(stats.errors.values())
    lines.append(f"{'all':<16} {total:>8} {error_total:>7}   ({total / traffic_seconds:.1f} requests/s)")
    for (kind, status), count in sorted(stats.errors.items()):
        lines.append(f"  error {kind} {status} x{count}: {stats.error_examples[(kind, status)]}")
    hits = stats.cache_hits
    lines.append(
        f"cache hits among repeated questions: {hits[('query cached', True)]} of "
        f"{hits[('query cached', True)] + hits[('query cached', False)]} (each upload changes the index "
        "version, so the next ask of each question is answered afresh)"
    )
    pending_documents = sum(n for s, n in documents.items() if s not in ("ready", "failed"))
    lines += [
        "",
        f"documents uploaded {len(stats.documents)}: ready {documents.get('ready', 0)}, failed "
        f"{documents.get('failed', 0)}, still pending {pending_documents} (lost = failed + pending = "
        f"{documents.get('failed', 0) + pending_documents}), after waiting {waited:.0f} s once traffic "
        "stopped",
        f"async jobs {len(stats.jobs)}: " + ", ".join(f"{s} {n}" for s, n in sorted(jobs.items())),
        "",
        f"RSS, from warm-up ({warm[0]:.0f} s) to the end of traffic ({traffic_seconds:.0f} s):",
        f"  web workers   {growth(warm[1]['web'], end['web'])}",
        f"  celery worker {growth(warm[1]['worker'], end['worker'])}",
        "RSS after the uploads and jobs drained:",
        f"  web workers   {growth(warm[1]['web'], after_drain['web'])}",
        f"  celery worker {growth(warm[1]['worker'], after_drain['worker'])}",
        "RSS over time (s: web MB, worker MB): "
        + ", ".join(
            f"{t:.0f}: {sum(s['web'].values()):.0f}/{sum(s['worker'].values()):.0f}" for t, s in samples[::6]
        ),
    ]
    web_growth = sum(end["web"].values()) / max(1e-9, sum(warm[1]["web"].values())) - 1
    worker_growth = sum(end["worker"].values()) / max(1e-9, sum(warm[1]["worker"].values())) - 1
    lost = documents.get("failed", 0) + pending_documents
    verdict = error_total == 0 and lost == 0 and web_growth < 0.10 and worker_growth < 0.10
    lines.append(
        "targets (0 errors, 0 lost documents, RSS growth < 10 % after warm-up): "
        + ("PASS" if verdict else "FAIL")
    )
    text = "\n".join(lines)
    print(text)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
