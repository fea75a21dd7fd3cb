"""No upload can starve another firm (#33), on the private stack with the two worker pools that
`manage.py serve` starts (`manage.py worker ingest` and `manage.py worker query`, real processes):

- firm A uploads the PDF bomb (11 KB, 80 MB of text) and then a burst of long documents; the bomb
  is refused in seconds, and firm B's async query and small upload finish within 120 s while A's
  first long document is still being indexed (the query has its own pool; B's document takes the
  next ingestion turn, not the one after A's whole burst);
- a document past RAG_INGEST_TIME_LIMIT ends `failed` with IngestTimeout, not stuck `processing`,
  and the worker goes on with the next one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

import pytest

from tests.rag.ingest.bombs import pdf_bomb

from .stack import PROJECT_ROOT, Process, WebApp, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BOUND = 120  # seconds: the "another firm's upload and async query finish within 120 s"


@pytest.fixture(scope="module")
def firm_b(stack, web) -> WebApp:
    """A second firm on the stack (its own API key and a case with the MSA), seen through `web`."""
    seeded = subprocess.run(
        [sys.executable, "-m", "tests.reliability.seed_firm", f"firm-b-{uuid.uuid4().hex[:6]}"],
        cwd=PROJECT_ROOT,
        env=stack.env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert seeded.returncode == 0, seeded.stderr
    seed = json.loads(seeded.stdout.strip().splitlines()[-1])
    firm = WebApp(web.base_url, web.process, api_key=seed["api_key"])
    firm.case_id = seed["case_id"]
    return firm


@pytest.fixture
def start_pool(stack):
    """start_pool(pool, **env) -> `manage.py worker <pool>` on the private stack, ready to consume;
    stopped after the test."""
    started: list[Process] = []

    def start(pool: str, **env: str) -> Process:
        process = stack.spawn(f"{pool}-pool", [sys.executable, "manage.py", "worker", pool], **env)
        started.append(process)
        wait_until(
            lambda: b"ready." in process.log_path.read_bytes() or not process.running(),
            timeout=90,
            message=f"the {pool} worker is ready",
        )
        assert process.running(), process.log_tail()
        return process

    yield start
    for process in started:
        process.stop()


def _long_contract(passages: int) -> bytes:
    """A text contract of about `passages` passages, unlike any other run's."""
    run = uuid.uuid4().hex[:8]
    clause = (
        "Section {n}. Obligation {run}-{n}. The Supplier shall deliver the goods listed in Schedule {n} "
        "to the Buyer's warehouse within {d} business days of each written order, packed so as to "
        "prevent damage in transit, with an itemised invoice and a certificate of origin. Risk of loss "
        "passes to the Buyer only upon signed acceptance at the delivery point."
    )
    body = [clause.format(n=n, run=run, d=n % 30 + 1) for n in range(passages * 3)]
    return "\n\n".join([f"SUPPLY AGREEMENT {run}", *body]).encode()


def _document(firm: WebApp, document_id: int) -> dict:
    status, body = firm.request("GET", f"/api/v1/rag/documents/{document_id}")
    assert status == 200, body
    return body


def _finished(firm: WebApp, document_id: int) -> dict | None:
    body = _document(firm, document_id)
    return body if body["status"] in ("ready", "failed") else None


def _upload(firm: WebApp, case_id: int, name: str, content: bytes) -> int:
    status, body = firm.upload(case_id, name, content)
    assert status == 201, body
    return body["documents"][0]["id"]


def test_the_bomb_is_refused_and_another_firm_is_served_while_one_firm_floods_ingestion(
    web, stack, firm_b, start_pool
):
    start_pool("ingest")
    start_pool("query")
    firm_a, case_a = web, stack.seed["case_id"]

    sent = time.monotonic()
    bomb = _upload(firm_a, case_a, "bomb.pdf", pdf_bomb())
    burst = [_upload(firm_a, case_a, f"supply-{n}.txt", _long_contract(passages=200)) for n in range(3)]
    refused = wait_until(lambda: _finished(firm_a, bomb), timeout=60, message="the bomb is refused")
    bomb_seconds = time.monotonic() - sent
    assert (refused["status"], refused["error_type"], refused["chunk_count"]) == (
        "failed",
        "DocumentTooLarge",
        0,
    )
    wait_until(
        lambda: _document(firm_a, burst[0])["status"] == "processing",
        timeout=60,
        message="firm A's first long document is being indexed",
    )

    started = time.monotonic()
    small = _upload(firm_b, firm_b.case_id, "note.txt", b"Firm B: the notice period is ninety days.")
    status, accepted = firm_b.query("What notice ends the agreement?", mode="async", use_cache=False)
    assert status == 202, accepted
    job = wait_until(
        lambda: (
            (body := firm_b.request("GET", f"/api/v1/rag/jobs/{accepted['job_id']}")[1])["status"]
            in ("succeeded", "failed")
            and body
        ),
        timeout=BOUND,
        interval=0.2,
        message="firm B's async query finishes",
    )
    job_seconds = time.monotonic() - started
    a_meanwhile = _document(firm_a, burst[0])["status"]
    ready = wait_until(lambda: _finished(firm_b, small), timeout=BOUND, interval=0.2, message="B's upload")
    upload_seconds = time.monotonic() - started
    a_last = _document(firm_a, burst[-1])["status"]
    print(
        f"bomb refused in {bomb_seconds:.1f} s; firm B's query {job_seconds:.1f} s, "
        f"upload {upload_seconds:.1f} s (A's first document then {a_meanwhile}, its last {a_last})"
    )
    assert job["status"] == "succeeded", job["error"]
    assert "ninety (90) days" in job["result"]["answer"]
    assert a_meanwhile == "processing"  # the query did not wait for A's document
    assert ready["status"] == "ready", ready
    assert a_last == "queued"  # B's upload did not wait for A's whole burst
    for document_id in burst:  # not left for the next test's worker
        assert firm_a.request("DELETE", f"/api/v1/rag/documents/{document_id}")[0] == 204


def test_a_document_past_the_time_limit_fails_and_the_worker_goes_on(stack, firm_b, start_pool):
    # The limit travels with the task (Celery puts a task's limits in its message): the web app that
    # queues the turn and the worker both run with it, as one deployment's settings would.
    # Far more work than the limit allows however idle the machine (600 passages took ~15 s here).
    limited = {"RAG_INGEST_TIME_LIMIT": "10"}
    web = stack.start_web(**limited)
    start_pool("ingest", **limited)
    slow = _upload(web, stack.seed["case_id"], "slow.txt", _long_contract(passages=2400))
    small = _upload(firm_b, firm_b.case_id, "next.txt", b"Firm B: payment is due in thirty days.")
    failed = wait_until(lambda: _finished(web, slow), timeout=90, message="the slow document ends")
    assert (failed["status"], failed["error_type"], failed["chunk_count"]) == ("failed", "IngestTimeout", 0)
    assert "RAG_INGEST_TIME_LIMIT" in failed["error_message"]
    assert (
        wait_until(lambda: _finished(firm_b, small), timeout=BOUND, message="the next one")["status"]
        == "ready"
    )
