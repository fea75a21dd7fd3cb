#!/usr/bin/env python
# Fairness benchmark (#20): prints figures, it is not a test.
#
# Tenant A uploads N CUAD contracts (default 50, in batches of RAG_MAX_FILES_PER_UPLOAD, as the API
# takes them); right after, tenant B uploads a one-page file. A real Celery worker (one process,
# the default concurrency) ingests both through the Redis broker. Measured: B's wait, from its
# upload returning to its document being ready, and how many of A's documents were ready by then.
# With one FIFO queue B waits for all of A's files; with the fair queue, for about one.
"""Fairness benchmark: the wait of one tenant's one-page upload behind another tenant's 50 files.

    .venv/bin/python bench/fairness.py [--corpus DIR] [--files N] [--timeout SECONDS] [--json OUT]

Needs Redis (REDIS_URL, default redis://127.0.0.1:6379/0). Creates tenants `bench-fair-a-<ts>`
and `bench-fair-b-<ts>` and a Celery worker on a queue of its own; deletes both tenants (with
their stored files) and stops the worker at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import REPO_ROOT, setup_django

DEFAULT_CORPUS = Path("/work/shared/eval/cuad-full-corpus/cuad")
ONE_PAGE = (
    "NOTICE OF TERMINATION\n\nThe Supplier hereby gives notice that the Master Services Agreement "
    "dated 1 March 2024 terminates thirty (30) days from the date of this letter, in accordance with "
    "clause 14.2. All outstanding invoices remain payable under clause 9.\n"
)


def _start_worker(queue: str) -> subprocess.Popen:
    """A Celery worker like production's (prefork, concurrency from settings) on its own queue."""
    env = {**os.environ, "CELERY_TASK_DEFAULT_QUEUE": queue}
    command = [sys.executable, "-m", "celery", "-A", "ragsite", "worker", "--loglevel=WARNING"]
    command += ["-Q", queue, "--without-gossip", "--without-mingle", "--without-heartbeat"]
    return subprocess.Popen(command, cwd=REPO_ROOT, env=env)


def _upload_batches(tenant, case, paths: list[Path]) -> None:
    from django.conf import settings
    from django.core.files.uploadedfile import SimpleUploadedFile

    from rag.ingest import service

    step = settings.RAG_MAX_FILES_PER_UPLOAD
    for start in range(0, len(paths), step):
        files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in paths[start : start + step]]
        service.documents_upload(tenant=tenant, case=case, files=files)


def _wait_ready(document, timeout: float) -> float:
    """Seconds until `document` is ready (or failed); raises on timeout."""
    from rag.models import Document, DocumentStatus

    started = time.monotonic()
    while time.monotonic() - started < timeout:
        status = Document.objects.filter(pk=document.pk).values_list("status", flat=True).first()
        if status in (DocumentStatus.READY, DocumentStatus.FAILED):
            return time.monotonic() - started
        time.sleep(0.2)
    raise SystemExit(f"tenant B's document was not ready after {timeout:.0f} s")


def _cleanup(tenants) -> None:
    from rag.ingest import service
    from rag.models import Case, Document

    for tenant in tenants:
        for case in Case.objects.for_tenant(tenant):
            names = Document.objects.for_tenant(tenant).filter(case=case).values_list("file", flat=True)
            service.corpus_remove(tenant=tenant, obj=case, file_names=list(names))
        tenant.delete()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    queue = f"bench-fair-{uuid.uuid4().hex[:8]}"
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
    os.environ["CELERY_TASK_DEFAULT_QUEUE"] = queue  # this process and its worker use one queue
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "false"
    setup_django()
    from rag import services as rag_services
    from rag.ingest import service
    from rag.models import Document, DocumentStatus
    from tenants.models import Tenant

    paths = sorted(p for p in args.corpus.iterdir() if p.suffix.lower() in {".pdf", ".docx", ".txt"})
    paths = paths[: args.files]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    tenant_a = Tenant.objects.create(slug=f"bench-fair-a-{stamp}", name="Bench fairness A")
    tenant_b = Tenant.objects.create(slug=f"bench-fair-b-{stamp}", name="Bench fairness B")
    case_a = rag_services.case_create(tenant=tenant_a, name="Fifty contracts")
    case_b = rag_services.case_create(tenant=tenant_b, name="One letter")
    worker = _start_worker(queue)
    try:
        time.sleep(5)  # the worker connects and loads the model
        started = time.monotonic()
        _upload_batches(tenant_a, case_a, paths)
        a_uploaded = time.monotonic() - started
        letter = service.document_upload(
            tenant=tenant_b, case=case_b, filename="notice.txt", content=ONE_PAGE.encode()
        ).document
        wait = _wait_ready(letter, args.timeout)
        a_ready = Document.objects.for_tenant(tenant_a).filter(status=DocumentStatus.READY).count()
        b_status = Document.objects.get(pk=letter.pk).status
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        _cleanup([tenant_a, tenant_b])
    figures = {
        "files_a": len(paths),
        "a_upload_seconds": round(a_uploaded, 1),
        "b_wait_seconds": round(wait, 1),
        "b_status": b_status,
        "a_ready_when_b_ready": a_ready,
    }
    print(
        f"Fairness: tenant A uploaded {len(paths)} contracts in {a_uploaded:.1f} s; tenant B's one-page "
        f"upload was {b_status} {wait:.1f} s later, when {a_ready} of A's {len(paths)} were ready."
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
