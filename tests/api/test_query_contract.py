"""Issue #19: the query API's contract as the specification writes it — the answer-shaped error
body, the spec's request forms (config_metadata, the `question` alias, filters.source and
filters.max_results, template_id with response_style) and the 404 for ids the tenant lacks."""

import pytest
from rest_framework.test import APIClient
from schemathesis import checks

from rag.models import AuditLog
from ragsite.exceptions import LLMUnavailable
from tests.rag.llm.conftest import closed_port_url  # noqa: F401
from tests.rag.pipeline.conftest import SUPPLY_QUESTION

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


# --- 2. the spec's request forms ----------------------------------------------------------------


def retrieved(body) -> list[int]:
    return body["provenance"]["documents_retrieved"]


LIST_QUESTION = SUPPLY_QUESTION


def test_config_metadata_sets_the_options_as_the_top_level_does(supply_agreements, viewer_client):
    nested = ask(viewer_client, query=LIST_QUESTION, use_cache=False, config_metadata={"top_k": 2}).json()
    flat = ask(viewer_client, query=LIST_QUESTION, use_cache=False, top_k=2).json()
    default = ask(viewer_client, query=LIST_QUESTION, use_cache=False).json()
    assert len(retrieved(default)) == 5
    assert retrieved(nested) == retrieved(flat) and len(retrieved(nested)) == 2
    row = AuditLog.objects.get(request_id=nested["request_id"])
    assert row.options == {"use_cache": False, "config_metadata": {"top_k": 2}}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"config_metadata": {"top_k": 0}}, "config_metadata.top_k"),
        ({"config_metadata": {"topk": 3}}, "config_metadata.topk"),
        ({"config_metadata": {"filters": {"doc_types": ["novel"]}}}, "config_metadata.filters.doc_types"),
        ({"config_metadata": ["top_k", 3]}, "config_metadata"),
        ({"config_metadata": {"top_k": 3}, "top_k": 3}, "config_metadata.top_k"),
        ({"config_metadata": {"agentic": True}, "mode": "agentic"}, "config_metadata.agentic"),
    ],
)
def test_bad_or_doubled_config_metadata_is_a_400_naming_the_field(viewer_client, body, field):
    for mode in ("sync", "async"):
        response = ask(viewer_client, **{"mode": mode, **body})
        assert_answer_shaped_error(response, 400, "InvalidQuery")
        assert field in response.json()["details"], response.json()["details"]


def test_filters_source_searches_only_the_named_document(corpus, viewer_client):
    by_file = ask(viewer_client, filters={"source": "initech-umbrella-lease.txt"}).json()
    assert set(retrieved(by_file)) == {corpus["lease"].pk}
    by_title = ask(viewer_client, filters={"source": corpus["msa"].title.upper()}).json()
    assert set(retrieved(by_title)) == {corpus["msa"].pk}
    assert "ninety (90) days" in by_title["answer"]


def test_filters_source_naming_no_document_is_i_dont_know(corpus, viewer_client):
    body = ask(viewer_client, filters={"source": "missing.pdf"}).json()
    assert body["answer"] is None and body["citations"] == [] and retrieved(body) == []
    assert body["message"] == "Information not found in the knowledge base."


def test_filters_source_never_reaches_another_tenants_document(
    corpus, viewer_client, other_case, ingest_text
):
    ingest_text(other_case, "Tenant shall pay rent of $9,999 monthly to Globex.", filename="globex-lease.txt")
    body = ask(viewer_client, query="How much monthly rent is paid?", filters={"source": "globex-lease.txt"})
    assert body.status_code == 200
    assert body.json()["answer"] is None and "9,999" not in body.content.decode()


def test_filters_max_results_is_top_k(supply_agreements, viewer_client):
    for n in (1, 3):
        spec = ask(viewer_client, query=LIST_QUESTION, use_cache=False, filters={"max_results": n}).json()
        top_k = ask(viewer_client, query=LIST_QUESTION, use_cache=False, top_k=n).json()
        assert spec["provenance"]["docs_retrieved"] == n
        assert retrieved(spec) == retrieved(top_k)
        assert spec["answer"] == top_k["answer"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"filters": {"max_results": 2}, "top_k": 2}, "filters.max_results"),
        ({"filters": {"max_results": 0}}, "filters.max_results"),
        ({"filters": {"max_results": "five"}}, "filters.max_results"),
        ({"filters": {"source": ""}}, "filters.source"),
        ({"filters": {"source": ["a.pdf"]}}, "filters.source"),
        ({"source": "a.pdf"}, "source"),  # the spec puts it in filters only
    ],
)
def test_bad_spec_filters_are_a_400_naming_the_field(viewer_client, body, field):
    response = ask(viewer_client, **body)
    assert_answer_shaped_error(response, 400, "InvalidQuery")
    assert field in response.json()["details"]


@pytest.mark.parametrize("kind", ["case_ids", "document_ids"])
def test_a_filter_naming_another_tenants_or_no_object_is_the_same_404(
    corpus, viewer_client, other_case, ingest_text, kind
):
    theirs = ingest_text(other_case, "Tenant shall pay rent of $9,999 monthly.", filename="globex-lease.txt")
    foreign = theirs.case_id if kind == "case_ids" else theirs.pk
    own = corpus["msa"].case_id if kind == "case_ids" else corpus["msa"].pk
    bodies = []
    for ids in ([own, foreign], [own, 2**31]):
        response = ask(viewer_client, query="How much monthly rent is paid?", filters={kind: ids})
        body = assert_answer_shaped_error(response, 404, "NotFound")
        assert "9,999" not in response.content.decode()
        bodies.append(
            {key: value for key, value in body.items() if key not in ("request_id", "processing_time_ms")}
        )
    foreign_body, missing_body = bodies
    assert f"filters.{kind}" in foreign_body["details"]
    assert foreign_body["message"] == missing_body["message"]
    assert str(own) not in foreign_body["details"][f"filters.{kind}"]
    assert ask(viewer_client, filters={kind: [own]}).status_code == 200


def test_an_async_request_naming_an_unknown_case_fails_at_once(corpus, viewer_client, other_case):
    from rag.models import QueryJob

    response = ask(viewer_client, mode="async", filters={"case_ids": [other_case.pk]})
    assert_answer_shaped_error(response, 404, "NotFound")
    assert not QueryJob.objects.exists()
    row = AuditLog.objects.get(request_id=response["X-Request-ID"])
    assert (row.status, row.error_type) == ("failed", "NotFound")


def test_template_id_and_a_different_response_style_is_a_400_naming_both(corpus, viewer_client):
    response = ask(viewer_client, template_id="legal_analysis_detailed", response_style="terse")
    body = assert_answer_shaped_error(response, 400, "InvalidQuery")
    assert "response_style" in body["details"]
    assert "legal_analysis_detailed" in body["details"]["response_style"]
    assert "detailed" in body["details"]["response_style"]


def test_template_id_with_its_own_response_style_answers_and_provenance_names_the_style(
    corpus, viewer_client
):
    # The orchestration spec's own example request gives both.
    body = ask(viewer_client, template_id="legal_analysis_balanced", response_style="balanced").json()
    assert body["provenance"]["template_id"] == "legal_analysis_balanced"
    assert body["provenance"]["response_style"] == "balanced"
    terse = ask(viewer_client, response_style="terse").json()
    assert terse["provenance"]["template_id"] == "legal_analysis_terse"
    assert terse["provenance"]["response_style"] == "terse"


# --- 4. the `question` alias --------------------------------------------------------------------


def test_the_spec_fastapi_body_question_and_filters_is_answered(corpus, viewer_client):
    response = viewer_client.post(
        QUERY, {"question": QUESTION, "filters": {"source": "acme-globex-msa.txt"}}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert "ninety (90) days" in body["answer"]
    assert AuditLog.objects.get(request_id=body["request_id"]).query == QUESTION


def test_question_and_query_together_is_a_400(viewer_client):
    response = viewer_client.post(QUERY, {"question": QUESTION, "query": QUESTION}, format="json")
    body = assert_answer_shaped_error(response, 400, "InvalidQuery")
    assert "question" in body["details"]


@pytest.mark.parametrize("question", ["", "   ", 42, None])
def test_a_bad_question_is_a_400_naming_it(viewer_client, question):
    response = viewer_client.post(QUERY, {"question": question}, format="json")
    body = assert_answer_shaped_error(response, 400, "InvalidQuery")
    assert set(body["details"]) & {"question", "query"}


# --- 3. the dry run's own response schema -------------------------------------------------------


def query_operation_200(schema_doc) -> dict:
    """The schema of POST query's 200 body, its component reference resolved."""
    schema = schema_doc["paths"][QUERY]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    if "$ref" in schema:
        schema = schema_doc["components"]["schemas"][schema["$ref"].rpartition("/")[2]]
    return schema


def test_the_query_operation_documents_the_dry_run_response(admin_client):
    schema_doc = admin_client.get("/api/schema/", {"format": "json"}).json()
    alternatives = {ref["$ref"].rpartition("/")[2] for ref in query_operation_200(schema_doc)["oneOf"]}
    assert alternatives == {"QueryResult", "DryRunResult", "JobAccepted"}
    dry_run = schema_doc["components"]["schemas"]["DryRunResult"]
    assert {"dry_run", "generated_prompt", "selected_snippets", "estimated_tokens", "would_use_model"} <= set(
        dry_run["required"]
    )


def test_a_dry_run_over_rest_conforms_to_the_documented_schema(corpus, tenant, make_key_client):
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from tenants.models import Role
    from tests.api.test_schemathesis import schema

    key = make_key_client(tenant, Role.VIEWER).raw_key
    case = schema[QUERY]["POST"].Case(
        body={"query": QUESTION, "dry_run": True}, headers={"Authorization": f"Api-Key {key}"}
    )
    # In-process WSGI requests must keep the test transaction (as in test_schemathesis).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        response = case.call()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    assert response.status_code == 200
    body = response.json()
    assert body["dry_run"] is True and "answer" not in body
    assert "Question:" in body["generated_prompt"] or QUESTION in body["generated_prompt"]
    assert body["selected_snippets"] and body["would_use_model_detail"]["provider"]
    assert isinstance(body["would_use_model"], str) and isinstance(body["generated_prompt"], str)
    # The documented status, content type and body (the other checks send requests of their own).
    conformance = [
        checks.status_code_conformance,
        checks.content_type_conformance,
        checks.response_schema_conformance,
    ]
    case.validate_response(response, checks=conformance)
