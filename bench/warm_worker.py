"""The first question a fresh query worker answers, with and without the model warm-up (rag.warmup).

    .venv/bin/python bench/warm_worker.py [--runs 3] [--settle 20] [--question "..."]

Each run starts a real `manage.py worker query` (prefork, one process) on a queue of its own, waits
`--settle` seconds after it is ready (a deployed worker is up before its first question), submits
one async query job for the first tenant with documents (use_cache off), and times it from
submission to success. RAG_WARM_MODELS=false is the "before": the models load inside that job.
Uses the configured database (EMBEDDED_PG_DATA_DIR / DATABASE_URL) and REDIS_URL.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.local")


def start_worker(queue: str, warm: bool, log: Path) -> subprocess.Popen:
    env = {**os.environ, "CELERY_TASK_DEFAULT_QUEUE": queue, "RAG_WARM_MODELS": str(warm).lower()}
    command = [sys.executable, "manage.py", "worker", "query", "--loglevel", "INFO"]
    with log.open("w") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def wait_ready(proc: subprocess.Popen, log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while "ready." not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the worker did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.2)


def first_answer_seconds(tenant, question: str, queue: str) -> float:
    from rag.queries.caller import Caller
    from rag.queries.services import query_job_submit
    from ragsite.celery import app
    from tenants.models import Role

    app.conf.task_default_queue = queue
    caller = Caller(tenant=tenant, role=Role.ADMIN)
    started = time.perf_counter()
    job, _ = query_job_submit(caller=caller, question=question, options={"use_cache": False})
    while True:
        job.refresh_from_db()
        if job.status in ("succeeded", "failed"):
            break
        time.sleep(0.05)
    if job.status != "succeeded":
        raise SystemExit(f"the job failed: {job.error}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--question", default="What law governs this agreement?")
    args = parser.parse_args()

    import django

    django.setup()
    from rag.models import Document

    document = Document.objects.filter(status="ready").order_by("pk").first()
    if document is None:
        raise SystemExit("no indexed document: run `make demo` or ingest one first")
    tenant = document.tenant
    figures: dict[str, list[float]] = {"RAG_WARM_MODELS=false": [], "RAG_WARM_MODELS=true": []}
    for run in range(args.runs):
        for warm in (False, True):
            queue = f"warm-bench-{os.getpid()}-{run}-{int(warm)}"
            log = Path(tempfile.gettempdir()) / f"{queue}.log"
            proc = start_worker(queue, warm, log)
            try:
                wait_ready(proc, log)
                time.sleep(args.settle)
                seconds = first_answer_seconds(tenant, args.question, queue)
            finally:
                proc.terminate()
                proc.wait(30)
            figures[f"RAG_WARM_MODELS={str(warm).lower()}"].append(seconds)
            print(
                f"run {run + 1}, warm-up {'on' if warm else 'off'}: first answer {seconds:.2f} s", flush=True
            )
    print(f"\nfirst answer of a fresh query worker ({args.settle:.0f} s after it is ready), seconds:")
    for name, values in figures.items():
        low, mid, high = min(values), statistics.median(values), max(values)
        print(f"  {name:22} min {low:6.2f}  median {mid:6.2f}  max {high:6.2f}")


if __name__ == "__main__":
    main()
