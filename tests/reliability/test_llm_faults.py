"""The model provider times out or fails: the Anthropic adapter, pointed at a local fake of the
Messages API (never a remote one), turns that into 504 GenerationTimeout / 503 LLMUnavailable with
the standard error body, and the query's audit row records the failure."""

from __future__ import annotations

import threading

import pytest

from rag.models import AuditLog, AuditStatus
from tenants.models import Role
from tests.error_bodies import QUERY_ERROR_FIELDS
from tests.rag.llm.conftest import FakeServer, Reply
from tests.rag.pipeline.conftest import ingest_msa

pytestmark = pytest.mark.django_db

QUESTION = "How much notice is needed to terminate the agreement?"


def _api_error(status: int, error_type: str) -> Reply:
    """An error reply in the Messages API's shape."""
    return Reply(status, {"type": "error", "error": {"type": error_type, "message": "fault injected"}})


@pytest.fixture
def model(settings):
    """A fake Messages API on 127.0.0.1 that the app's Anthropic provider is configured to use
    (0.5 s timeout, no retries); its replies are queued by each test."""
    server = FakeServer(lambda received: _api_error(500, "api_error"))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    settings.RAG_LLM_PROVIDER = "anthropic"
    settings.ANTHROPIC_API_KEY = "sk-ant-fault-tests"
    settings.ANTHROPIC_BASE_URL = server.url
    settings.ANTHROPIC_TIMEOUT_SECONDS = 0.5
    settings.ANTHROPIC_MAX_RETRIES = 0
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def client(tenant, make_key_client, settings, tmp_path):
    """A viewer's API client of a tenant with one ingested contract."""
    settings.MEDIA_ROOT = tmp_path / "media"
    ingest_msa(tenant, case_name="Model faults")
    return make_key_client(tenant, Role.VIEWER)


def _failed_query(client, status: int, error_type: str) -> dict:
    response = client.post("/api/v1/rag/query", {"query": QUESTION, "use_cache": False}, format="json")
    body = response.json()
    assert response.status_code == status, body
    assert set(body) == QUERY_ERROR_FIELDS and body["error_type"] == error_type and body["message"], body
    assert response["X-Request-ID"] == body["request_id"]
    audit = AuditLog.objects.get(request_id=body["request_id"])
    assert (audit.status, audit.error_type) == (AuditStatus.FAILED, error_type)
    assert audit.query == QUESTION and audit.result is None
    return body


def test_a_model_slower_than_the_timeout_is_a_504_recorded_in_the_audit(client, model):
    model.queued.append(Reply(delay=5))  # answers long after the 0.5 s timeout
    _failed_query(client, 504, "GenerationTimeout")
    assert len(model.received) == 1  # the model was really asked (and not again: no retries)


@pytest.mark.parametrize(("status", "error_type"), [(500, "api_error"), (529, "overloaded_error")])
def test_a_failing_model_is_a_503_recorded_in_the_audit(client, model, status, error_type):
    model.queued.append(_api_error(status, error_type))
    _failed_query(client, 503, "LLMUnavailable")
    assert len(model.received) == 1


def test_an_unreachable_model_is_a_503_recorded_in_the_audit(client, model, settings):
    model.stopping.set()
    model.shutdown()
    model.server_close()  # nothing listens on its port any more
    _failed_query(client, 503, "LLMUnavailable")
