"""API test fixtures: the ingestion and pipeline fixtures (real corpus, isolated answer cache,
fake model providers) shared with tests/rag, and clients per role."""

import time
from types import SimpleNamespace

import pytest

from tenants.models import Role
from tests.rag.conftest import _media_in_tmp, case, committed, other_case, upload  # noqa: F401
from tests.rag.pipeline.conftest import (  # noqa: F401
    _isolated_answer_cache,
    corpus,
    fake_provider,
    ingest_text,
    supply_agreements,
)


@pytest.fixture
def viewer_client(tenant, make_key_client):
    return make_key_client(tenant, Role.VIEWER)


@pytest.fixture
def member_client(tenant, make_key_client):
    return make_key_client(tenant, Role.MEMBER)


@pytest.fixture
def admin_client(tenant, make_key_client):
    return make_key_client(tenant, Role.ADMIN)


@pytest.fixture
def other_admin_client(other_tenant, make_key_client):
    """An admin API key of `other_tenant`."""
    return make_key_client(other_tenant, Role.ADMIN)


@pytest.fixture
def one_throttle_window(monkeypatch):
    """Pin the throttle's clock to one second into the current minute. Its windows are fixed clock
    minutes, so a test's requests could otherwise straddle two windows and count from zero again
    halfway (a CI run once saw a fourth request of a 3/min budget let through that way)."""
    now = time.time()
    pinned = now - now % 60 + 1
    monkeypatch.setattr("ragsite.throttling.time", SimpleNamespace(time=lambda: pinned))
    return pinned
