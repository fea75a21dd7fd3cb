"""Fixtures of the fault tests: one private stack (PostgreSQL, Redis, web app) for the session.

Each test that stops a service starts it again before it ends, so the next test finds the stack
whole; `Stack.close()` stops everything whatever happened.
"""

from __future__ import annotations

import os
import shutil

import pytest

from .stack import Process, Stack, WebApp


@pytest.fixture(scope="session")
def stack():
    """Private PostgreSQL + pgvector and Redis with a seeded database (see stack.Stack)."""
    if shutil.which("redis-server") is None:
        if os.environ.get("LEXRAG_REQUIRE_REDIS"):
            pytest.fail("redis-server is not installed but LEXRAG_REQUIRE_REDIS demands Redis")
        pytest.skip("redis-server is not installed")
    private = Stack()
    try:
        private.start()
        yield private
    finally:
        private.close()


@pytest.fixture(scope="session")
def web(stack) -> WebApp:
    """The app under test: gunicorn serving it on the private stack."""
    return stack.start_web()


@pytest.fixture
def restore(stack):
    """Start again, after the test, whichever private service the test left stopped."""
    yield
    if not stack.redis.answers():
        stack.redis.start()
    if not stack.postgres.running():
        stack.postgres.start()


@pytest.fixture
def start_worker(stack):
    """start_worker(name, **env) -> a Celery worker on the private stack, stopped after the test
    (so a worker of a failed test never takes the next test's tasks)."""
    started: list[Process] = []

    def start(name: str, pool: str = "solo", **env: str) -> Process:
        started.append(stack.start_worker(name, pool=pool, **env))
        return started[-1]

    yield start
    for process in started:
        process.stop()
