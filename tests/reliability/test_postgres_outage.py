"""PostgreSQL stops: health is unhealthy (503) and queries are 503 VectorStoreUnavailable with the
standard error body; once it is back the same web process answers again, without a restart."""

from __future__ import annotations

import time

import pytest

from tests.error_bodies import QUERY_ERROR_FIELDS

from .stack import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

QUESTION = "Which law governs the agreement?"


def test_a_database_outage_is_a_503_and_the_same_process_recovers(web, stack, restore):
    status, body = web.query(QUESTION, use_cache=False)
    assert status == 200, body
    serving = web.worker_pids()
    assert serving, "gunicorn has no worker"

    stack.postgres.stop()

    status, health = web.health()
    assert status == 503, health
    assert health["status"] == "unhealthy"
    assert health["database"]["status"] == "unreachable"
    assert health["vector_store"]["status"] == "unreachable"
    for _ in range(3):  # every request of the outage, not only the first on a broken connection
        status, body = web.query(QUESTION, use_cache=False)
        assert status == 503, body
        assert set(body) == QUERY_ERROR_FIELDS, body
        assert body["error_type"] == "VectorStoreUnavailable"
        assert body["message"] and body["request_id"]
    # A cached answer is no way around it either: the cache key needs the index version.
    status, body = web.query(QUESTION)
    assert (status, body["error_type"]) == (503, "VectorStoreUnavailable"), body
    status, body = web.request("GET", "/api/v1/rag/documents")
    assert (status, body["error_type"]) == (503, "VectorStoreUnavailable"), body

    stack.postgres.start()

    back = time.monotonic()
    wait_until(lambda: web.health()[0] == 200, timeout=60, message="health answers 200 again")
    recovered_in = time.monotonic() - back
    status, body = web.query(QUESTION, use_cache=False)
    assert status == 200, body
    assert "Delaware" in body["answer"]
    assert web.process.running()
    assert web.worker_pids() == serving  # the same worker process, not a restarted one
    print(f"postgres outage: healthy {recovered_in:.2f} s after the server was back")
