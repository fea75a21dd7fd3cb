"""API test fixtures: the ingestion and pipeline fixtures (real corpus, isolated answer cache,
fake model providers) shared with tests/rag, and clients per role."""

import pytest

from tenants.models import Role
from tests.rag.conftest import _media_in_tmp, case, committed, other_case, upload  # noqa: F401
from tests.rag.pipeline.conftest import (  # noqa: F401
    _isolated_answer_cache,
    corpus,
    fake_provider,
    ingest_text,
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
