"""Issue #19: the query API's contract as the specification writes it — the answer-shaped error
body, the spec's request forms (config_metadata, the `question` alias, filters.source and
filters.max_results, template_id with response_style) and the 404 for ids the tenant lacks."""

import pytest
from rest_framework.test import APIClient

from rag.models import AuditLog
from ragsite.exceptions import LLMUnavailable
from tests.rag.llm.conftest import closed_port_url  # noqa: F401

pytestmark = pytest.mark.django_db

QUERY = "/api/v1/rag/query"
QUESTION = "How much notice is needed to terminate the master services agreement?"
# The service-interface spec's "Error Response Format", on top of the house error body.
ANSWER_FIELDS = {"answer": None, "citations": [], "confidence": 0.0}


def ask(client, headers=None, **body):
    return client.post(QUERY, {"query": QUESTION, **body}, format="json", headers=headers or {})


def assert_answer_shaped_error(response, status, error_type, request_id=None):
    """The body a client treating every body as an answer can read, and the house error body
    (whose request_id is this request's, unless `request_id` names another)."""
    assert response.status_code == status
    body = response.json()
    assert {name: body[name] for name in ANSWER_FIELDS} == ANSWER_FIELDS
    assert body["error_type"] == error_type
    assert isinstance(body["message"], str) and body["message"]
    assert body["request_id"] == (request_id or response["X-Request-ID"])
    assert isinstance(body["details"], dict | list)
    assert isinstance(body["error_details"], str) and body["error_details"]
    assert isinstance(body["processing_time_ms"], int | float) and body["processing_time_ms"] >= 0
    return body


# --- 1. the error body --------------------------------------------------------------------------


def test_a_bad_option_is_an_answer_shaped_400_naming_the_field(viewer_client):
    body = assert_answer_shaped_error(ask(viewer_client, top_k=0), 400, "InvalidQuery")
    assert "top_k" in body["details"]
    assert "top_k" in body["error_details"]


def test_a_missing_query_and_a_non_object_body_are_answer_shaped_400s(viewer_client):
    assert_answer_shaped_error(viewer_client.post(QUERY, {}, format="json"), 400, "InvalidQuery")
    not_json = viewer_client.post(QUERY, "{not json", content_type="application/json")
    assert_answer_shaped_error(not_json, 400, "ParseError")


def test_no_credentials_is_an_answer_shaped_401():
    response = APIClient().post(QUERY, {"query": QUESTION}, format="json")
    assert_answer_shaped_error(response, 401, "NotAuthenticated")


def test_an_unknown_template_is_an_answer_shaped_404(corpus, viewer_client):
    assert_answer_shaped_error(ask(viewer_client, template_id="no_such_template"), 404, "NotFound")


def test_a_model_failure_is_an_answer_shaped_503(corpus, viewer_client, fake_provider):
    fake_provider(error=LLMUnavailable("connection refused", details={"reason": "refused"}))
    body = assert_answer_shaped_error(ask(viewer_client, use_cache=False), 503, "LLMUnavailable")
    assert "refused" in body["error_details"]


def test_a_repeated_failed_request_with_an_idempotency_key_is_answer_shaped(
    corpus, viewer_client, fake_provider
):
    fake_provider(error=LLMUnavailable())
    headers = {"Idempotency-Key": "contract-1"}
    first = ask(viewer_client, headers=headers, use_cache=False)
    assert_answer_shaped_error(first, 503, "LLMUnavailable")
    again = ask(viewer_client, headers=headers, use_cache=False)  # the stored failure, repeated
    assert_answer_shaped_error(again, 503, "LLMUnavailable", request_id=first["X-Request-ID"])


def test_the_job_poll_404_and_a_failed_jobs_error_are_answer_shaped(corpus, viewer_client, fake_provider):
    assert_answer_shaped_error(viewer_client.get("/api/v1/rag/jobs/job_unknown"), 404, "NotFound")
    fake_provider(error=LLMUnavailable())
    job_id = ask(viewer_client, mode="async", use_cache=False).json()["job_id"]
    job = viewer_client.get(f"/api/v1/rag/jobs/{job_id}").json()
    assert job["status"] == "failed" and job["result"] is None
    error = job["error"]
    assert {name: error[name] for name in ANSWER_FIELDS} == ANSWER_FIELDS
    assert error["error_type"] == "LLMUnavailable" and error["status"] == 503
    assert error["request_id"] == job["request_id"]
    assert isinstance(error["error_details"], str) and error["error_details"]
    assert error["processing_time_ms"] == job["timing"]["run_ms"]


def test_an_unreachable_ollama_is_503_ollama_unavailable(corpus, viewer_client, settings, closed_port_url):  # noqa: F811
    settings.RAG_LLM_PROVIDER = "ollama"
    settings.OLLAMA_HOST = closed_port_url
    settings.OLLAMA_MODEL = "mistral:7b"
    body = assert_answer_shaped_error(ask(viewer_client, use_cache=False), 503, "OllamaUnavailable")
    assert closed_port_url in body["message"]
    row = AuditLog.objects.get(request_id=body["request_id"])
    assert (row.status, row.error_type) == ("failed", "OllamaUnavailable")


def test_a_successful_answer_is_unchanged_by_the_error_fields(corpus, viewer_client):
    body = ask(viewer_client).json()
    assert "ninety (90) days" in body["answer"]
    assert "error_type" not in body and "error_details" not in body
