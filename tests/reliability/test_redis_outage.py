"""Redis stops mid-run: answers keep coming (the answer cache is bypassed), health says the cache
is degraded, nothing is a 5xx; when Redis is back, answers are cached again."""

from __future__ import annotations

import time

import pytest

from .stack import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

QUESTION = "How much notice is needed to terminate the agreement?"
OTHER_QUESTION = "Which law governs the agreement?"


def _answered(web, question: str) -> dict:
    status, body = web.query(question)
    assert status == 200, body
    assert body["answer"] and body["citations"], body
    return body


def test_queries_are_answered_without_redis_and_cached_again_once_it_is_back(web, stack, restore):
    _answered(web, QUESTION)
    assert _answered(web, QUESTION)["flags"]["cache_hit"] is True  # the cache works before the fault

    stack.redis.stop()

    status, health = web.health()
    assert status == 200, health
    assert health["status"] == "degraded"
    assert health["cache"]["status"] == "unreachable"
    assert health["broker"]["status"] == "unreachable"
    assert health["database"]["status"] == "connected"
    started = time.monotonic()
    for question in (QUESTION, QUESTION, OTHER_QUESTION):
        body = _answered(web, question)
        assert body["flags"]["cache_hit"] is False  # bypassed: nothing can be read from it
        assert "ninety (90) days" in body["answer"] or question == OTHER_QUESTION
    outage_latency = (time.monotonic() - started) / 3
    assert outage_latency < 10, "queries stall on the missing cache"
    status, documents = web.request("GET", "/api/v1/rag/documents")  # throttling fails open too
    assert status == 200, documents

    stack.redis.start()  # empty: no persistence, as after a crash

    back = time.monotonic()
    wait_until(lambda: web.health()[1]["status"] == "healthy", timeout=30, message="health is healthy again")
    healthy_in = time.monotonic() - back
    print(f"redis outage: {outage_latency * 1000:.0f} ms per query; healthy {healthy_in:.2f} s after restart")
    assert _answered(web, QUESTION)["flags"]["cache_hit"] is False  # the restarted Redis is empty
    assert _answered(web, QUESTION)["flags"]["cache_hit"] is True  # written and read again
