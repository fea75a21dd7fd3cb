"""A Celery worker is killed (SIGKILL, the whole process group) mid-task: once another worker runs,
the document ends `ready` with each passage exactly once, and the query job is retried, not left
`running` for good.

With the Redis broker a killed worker's unacknowledged task only comes back after the visibility
timeout (an hour), so what brings the work back within seconds is the workers' recovery sweep
(rag.ingest.recovery; rag.queries.runners and services.query_jobs_recover_lost); the worker
processes here run with its timings shortened (tests/reliability/settings.py).
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import pytest

from tests.rag.llm.conftest import FakeServer, Reply

from .stack import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _contract(passages: int) -> bytes:
    """A TXT contract of about `passages` passages (of RAG_CHUNK_SIZE), unlike any other run's."""
    run = uuid.uuid4().hex[:8]
    clauses = [
        f"Section {n}. Obligation {run}-{n}. The Supplier shall deliver the goods listed in Schedule {n} "
        f"to the Buyer's warehouse number {n * 7} within {n % 30 + 1} business days of each written order, "
        "packed so as to prevent damage in transit, with an itemised invoice and a certificate of origin. "
        "Risk of loss passes to the Buyer only upon signed acceptance at the delivery point; until then the "
        "Supplier bears all risk and shall insure the goods at replacement value with a reputable insurer, "
        "naming the Buyer as loss payee, and shall provide evidence of cover within five days of a request."
        for n in range(passages * 2)
    ]
    return "\n\n".join([f"SUPPLY AGREEMENT {run}", *clauses]).encode()


def _document(stack, document_id: int) -> dict:
    rows = stack.postgres.execute(
        stack.DATABASE,
        "SELECT status, stage, progress, chunk_count FROM rag_document WHERE id = %s",
        (document_id,),
    )
    return dict(zip(("status", "stage", "progress", "chunk_count"), rows[0], strict=True))


def test_a_document_whose_worker_is_killed_mid_ingest_ends_ready_with_each_passage_once(
    web, stack, start_worker
):
    # Small embedding batches: progress (and the kill) comes after the first few passages.
    worker = start_worker("ingest-killed", EMBEDDING_BATCH_SIZE="2")
    status, body = web.upload(stack.seed["case_id"], "supply.txt", _contract(passages=30))
    assert status == 201, body
    document_id = body["documents"][0]["id"]
    mid_embedding = wait_until(
        lambda: (doc := _document(stack, document_id))["stage"].startswith("embedding ") and doc,
        timeout=120,
        interval=0.05,
        message="the worker is embedding the document",
    )

    worker.kill()

    killed = _document(stack, document_id)
    assert killed["status"] == "processing", f"finished before the kill: {killed}"
    assert killed["progress"] < 95, killed
    start_worker("ingest-rescuer")
    back = time.monotonic()
    done = wait_until(
        lambda: (doc := _document(stack, document_id))["status"] in ("ready", "failed") and doc,
        timeout=180,
        interval=0.2,
        message="the document is ingested after the restart",
    )
    print(
        f"killed at {mid_embedding['stage']}; ready {time.monotonic() - back:.1f} s after a worker restarted"
    )
    assert done["status"] == "ready", done
    _assert_each_passage_once(stack, document_id, done["chunk_count"])


def _assert_each_passage_once(stack, document_id: int, chunk_count: int) -> None:
    count, distinct, first, last, embedded, exact = stack.postgres.execute(
        stack.DATABASE,
        """
        SELECT count(*), count(DISTINCT c.index), min(c.index), max(c.index),
               count(c.embedding), count(*) FILTER (
                   WHERE substr(d.text, c.char_start + 1, c.char_end - c.char_start) = c.text)
        FROM rag_chunk c JOIN rag_document d ON d.id = c.document_id
        WHERE c.document_id = %s
        """,
        (document_id,),
    )[0]
    assert count == chunk_count >= 25
    assert (distinct, first, last) == (count, 0, count - 1)  # no passage twice, none missing
    assert embedded == exact == count


def test_a_pool_child_killed_mid_ingest_is_replaced_and_the_document_ends_ready(web, stack, start_worker):
    """Only the prefork pool's child dies (the OOM killer's usual pick) while its parent lives: the
    parent replaces it and, with acks late and reject-on-worker-lost, the task goes straight back
    to the queue; the recovery sweep may find the silent heartbeat too, and still each passage is
    stored once."""
    worker = start_worker("ingest-prefork", pool="prefork", EMBEDDING_BATCH_SIZE="2")
    status, body = web.upload(stack.seed["case_id"], "supply.txt", _contract(passages=30))
    assert status == 201, body
    document_id = body["documents"][0]["id"]
    wait_until(
        lambda: _document(stack, document_id)["stage"].startswith("embedding "),
        timeout=180,
        interval=0.05,
        message="the pool child is embedding the document",
    )
    (child,) = _children(worker.pid)
    os.kill(child, signal.SIGKILL)

    assert _document(stack, document_id)["status"] == "processing"
    done = wait_until(
        lambda: (doc := _document(stack, document_id))["status"] in ("ready", "failed") and doc,
        timeout=240,
        interval=0.2,
        message="the document is ingested by the replacement child",
    )
    assert done["status"] == "ready", done
    assert worker.running() and child not in _children(worker.pid)
    _assert_each_passage_once(stack, document_id, done["chunk_count"])


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return [int(child) for child in listing.read().split()]


def _job(web, job_id: str) -> dict:
    status, body = web.request("GET", f"/api/v1/rag/jobs/{job_id}")
    assert status == 200, body
    return body


@pytest.fixture
def hanging_model():
    """A local fake of the Messages API that never answers its first request (until the test
    ends), and fails any other; stopped after the test."""
    model = FakeServer(lambda received: Reply(status=500, body={"type": "error"}))
    model.queued.append(Reply(delay=120))
    threading.Thread(target=model.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield model
    model.stopping.set()
    model.shutdown()
    model.server_close()


def test_a_query_job_whose_worker_is_killed_mid_query_is_retried(web, stack, start_worker, hanging_model):
    # The model never answers: the job is certainly mid-query when its worker is killed.
    worker = start_worker(
        "query-killed",
        RAG_LLM_PROVIDER="anthropic",
        ANTHROPIC_API_KEY="sk-ant-test",
        ANTHROPIC_BASE_URL=hanging_model.url,
        ANTHROPIC_MAX_RETRIES="0",
        ANTHROPIC_TIMEOUT_SECONDS="300",
    )
    question = f"What notice ends the agreement (case {uuid.uuid4().hex[:6]})?"
    status, accepted = web.query(question, mode="async", use_cache=False)
    assert status == 202, accepted
    job_id = accepted["job_id"]
    wait_until(lambda: hanging_model.received, timeout=120, message="the job asks the model")
    assert _job(web, job_id)["status"] == "running"

    worker.kill()

    killed_at = time.monotonic()
    assert _job(web, job_id)["status"] == "running"  # nothing else knows yet
    # The rescuer answers offline. Its sweep sees the killed worker's alive-mark expire (within
    # 5 s here), long before the job's time limit (RAG_QUERY_JOB_TIME_LIMIT, 300 s) would tell.
    start_worker("query-rescuer")
    job = wait_until(
        lambda: (job := _job(web, job_id))["status"] in ("succeeded", "failed") and job,
        timeout=120,
        interval=0.2,
        message="the job leaves running",
    )
    took = time.monotonic() - killed_at
    print(f"query job {job['status']} after {job['attempts']} runs, {took:.1f} s after the kill")
    assert job["status"] == "succeeded", job["error"]
    assert job["attempts"] == 2  # the killed run and the retry
    assert "ninety (90) days" in job["result"]["answer"]
    assert len(hanging_model.received) == 1  # the retry ran on the rescuer, not on the fake model
