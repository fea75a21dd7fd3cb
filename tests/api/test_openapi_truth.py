"""The OpenAPI schema says what the server accepts (#36, items 14 and 17): each place where the fuzz
found the schema looser than the server, checked both ways — what the schema now states, and that
the server behaves so."""

from __future__ import annotations

import re

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from rag.models import Document
from tests.api.conftest_docs import *  # noqa: F403  (fixtures)
from tests.api.conftest_docs import CASES, DOCUMENTS, upload_file
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

QUERY = "/api/v1/rag/query"
SIMULATE = "/api/v1/rag/admin/simulate"
WEIGHTS = "/api/v1/rag/admin/ranking/weights"
TEMPLATE = "/api/v1/rag/admin/templates/{template_id}"
UPLOAD = "/api/v1/rag/cases/{case_id}/documents"
QUESTION = "How much notice is needed to terminate the master services agreement?"
BODY_METHODS = ("post", "put", "patch")


def _schema() -> dict:
    """The schema /api/schema/ serves (generated the same way)."""
    return SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture(scope="module")
def schema() -> dict:
    return _schema()


def _request_body(schema: dict, path: str, method: str) -> dict:
    return schema["paths"][path][method]["requestBody"]


def _component(schema: dict, path: str, method: str, media: str = "application/json") -> dict:
    ref = _request_body(schema, path, method)["content"][media]["schema"]["$ref"]
    return schema["components"]["schemas"][ref.rpartition("/")[2]]


def _validator(schema: dict, path: str, method: str) -> jsonschema.Validator:
    """A validator of the operation's JSON request body, its $refs resolved in the whole schema."""
    ref = _request_body(schema, path, method)["content"]["application/json"]["schema"]["$ref"]
    return jsonschema.Draft4Validator({"$ref": ref, "components": schema["components"]})


# --- 415 on every body ---------------------------------------------------------------------------


def _operations_with_a_body(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in BODY_METHODS and "requestBody" in operation:
                yield path, method, operation


def test_every_operation_with_a_body_documents_415_and_answers_it(schema, tenant):
    # A session admin: the one credential every body operation (tenant switch included) takes.
    client = APIClient()
    client.force_login(MembershipFactory(tenant=tenant, role="admin").user)
    operations = list(_operations_with_a_body(schema))
    assert len(operations) >= 15
    for path, method, operation in operations:
        assert "415" in operation["responses"], (method, path)
        url = re.sub(r"\{[^}]+\}", "1", path)
        response = getattr(client, method)(url, "query=x", content_type="text/plain")
        assert response.status_code == 415, (method, path, response.status_code)
        assert response.json()["error_type"] == "UnsupportedMediaType"


# --- POST query: exactly one of query and question; the examples -------------------------------


@pytest.mark.parametrize(
    ("body", "valid"),
    [
        ({"query": QUESTION}, True),
        ({"question": QUESTION}, True),
        ({}, False),
        ({"query": QUESTION, "question": QUESTION}, False),
        ({"top_k": 3}, False),
    ],
)
def test_the_query_schema_refuses_what_the_server_refuses(schema, viewer_client, body, valid):
    assert _validator(schema, QUERY, "post").is_valid(body) is valid
    response = viewer_client.post(QUERY, {**body, "dry_run": True}, format="json")
    assert (response.status_code == 200) is valid, response.json()
    assert _request_body(schema, QUERY, "post")["required"] is True


def test_the_query_400_names_the_missing_or_doubled_question(schema):
    description = schema["paths"][QUERY]["post"]["responses"]["400"]["description"]
    assert "`{}`" in description and "both `query` and `question`" in description


def test_the_request_examples_name_no_tenant(schema):
    examples = _request_body(schema, QUERY, "post")["content"]["application/json"]["examples"]
    assert {"SyncRequest", "AsyncRequest"} <= set(examples)
    for example in examples.values():
        assert "tenant_id" not in example["value"]
        assert "your own tenant" in example["description"]


def test_the_sync_example_copied_as_is_answers_any_tenant(schema, other_tenant, make_key_client):
    # The example once named "acme-law": a key of any other firm got 403.
    example = _request_body(schema, QUERY, "post")["content"]["application/json"]["examples"]["SyncRequest"]
    client = make_key_client(other_tenant, "viewer")
    response = client.post(QUERY, {**example["value"], "dry_run": True}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["dry_run"] is True


def test_naming_another_tenant_is_still_403(viewer_client, other_tenant):
    response = viewer_client.post(
        QUERY, {"query": QUESTION, "tenant_id": other_tenant.slug, "dry_run": True}, format="json"
    )
    assert response.status_code == 403


# --- filters.metadata and a document's metadata: objects ----------------------------------------


@pytest.mark.parametrize(
    ("metadata", "valid"),
    [
        ({"party": "Acme", "year": 2023, "signed": True}, True),
        ({"year": [2022, 2023]}, True),
        (None, True),
        ({"party": {"name": "Acme"}}, False),
        ({"year": []}, False),
        ({"party": [["Acme"]]}, False),
        (["party"], False),
        ("party=Acme", False),
    ],
)
def test_filters_metadata_is_a_flat_object_in_the_schema_and_the_server(
    schema, viewer_client, metadata, valid
):
    body = {"query": QUESTION, "filters": {"metadata": metadata}}
    # jsonschema knows no `nullable` (OpenAPI 3.0): null is checked against the schema's word.
    if metadata is not None:
        assert _validator(schema, QUERY, "post").is_valid(body) is valid
    else:
        assert schema["components"]["schemas"]["FiltersRequest"]["properties"]["metadata"]["nullable"] is True
    response = viewer_client.post(QUERY, {**body, "dry_run": True}, format="json")
    assert (response.status_code == 200) is valid, response.json()
    if not valid:
        assert response.status_code == 400


@pytest.mark.parametrize(("metadata", "status"), [({"party": "Acme"}, 200), (["party"], 400), ("Acme", 400)])
def test_a_documents_metadata_is_an_object(schema, member_client, case, queued_document, metadata, status):
    document = queued_document(case)
    path = "/api/v1/rag/documents/{document_id}"
    field = _component(schema, path, "patch")["properties"]["metadata"]
    assert field["type"] == "object"
    assert schema["components"]["schemas"]["DocumentOutput"]["properties"]["metadata"]["type"] == "object"
    response = member_client.patch(f"{DOCUMENTS}/{document.pk}", {"metadata": metadata}, format="json")
    assert response.status_code == status


# --- POST admin/simulate: dry_run true or false -------------------------------------------------


@pytest.mark.parametrize("dry_run", [True, False])
def test_simulate_takes_dry_run_true_or_false_and_always_dry_runs(schema, admin_client, dry_run):
    assert _component(schema, SIMULATE, "post")["properties"]["dry_run"]["type"] == "boolean"
    response = admin_client.post(SIMULATE, {"query": QUESTION, "dry_run": dry_run}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["dry_run"] is True  # the model is never called


@pytest.mark.parametrize("dry_run", ["false", 0, None])
def test_simulate_refuses_a_dry_run_that_is_not_a_boolean(admin_client, dry_run):
    response = admin_client.post(SIMULATE, {"query": QUESTION, "dry_run": dry_run}, format="json")
    assert response.status_code == 400
    assert "dry_run" in response.json()["details"]


# --- POST admin/ranking/weights: a body is required ----------------------------------------------


def test_the_weights_body_is_required(schema, admin_client):
    assert _request_body(schema, WEIGHTS, "post")["required"] is True
    assert not _validator(schema, WEIGHTS, "post").is_valid({})
    assert admin_client.post(WEIGHTS, {}, format="json").status_code == 400
    assert admin_client.post(WEIGHTS).status_code == 400  # no body at all


# --- PUT/PATCH admin/templates/<id>: template_id is read-only -------------------------------------


@pytest.mark.parametrize("method", ["put", "patch"])
def test_template_id_is_not_offered_for_writing(schema, admin_client, method):
    component = _component(schema, TEMPLATE, method)
    assert "template_id" not in component["properties"]
    assert component["minProperties"] == 1
    assert _request_body(schema, TEMPLATE, method)["required"] is True
    assert "template_id` is read-only" in schema["paths"][TEMPLATE][method]["description"]
    url = TEMPLATE.format(template_id="legal_analysis_balanced")
    renamed = getattr(admin_client, method)(url, {"template_id": "renamed", "name": "Ours"}, format="json")
    assert renamed.status_code == 400 and "template_id" in renamed.json()["details"]
    nothing = getattr(admin_client, method)(url, {}, format="json")
    assert nothing.status_code == 400
    repeated = getattr(admin_client, method)(
        url, {"template_id": "legal_analysis_balanced", "name": "Ours"}, format="json"
    )
    assert repeated.status_code == 200


# --- POST cases/<id>/documents: 1 to RAG_MAX_FILES_PER_UPLOAD files; a duplicate is 200 -----------


def test_the_upload_states_how_many_files_it_takes(settings, case, member_client):
    settings.RAG_MAX_FILES_PER_UPLOAD = 3
    files = _component(_schema(), UPLOAD, "post", "multipart/form-data")["properties"]["files"]
    assert (files["minItems"], files["maxItems"]) == (1, 3)
    notes = lambda n: [upload_file(f"n{i}.txt", f"Note {i}.".encode()) for i in range(n)]  # noqa: E731
    url = f"{CASES}/{case.pk}/documents"
    assert member_client.post(url, {"files": notes(4)}, format="multipart").status_code == 413
    assert member_client.post(url, {}, format="multipart").status_code == 400
    assert member_client.post(url, {"files": notes(3)}, format="multipart").status_code == 201


def test_a_duplicate_upload_is_200_with_the_existing_document(schema, case, member_client):
    responses = schema["paths"][UPLOAD]["post"]["responses"]
    assert {"200", "201"} <= set(responses)
    url = f"{CASES}/{case.pk}/documents"
    first = member_client.post(url, {"files": [upload_file("contract.txt")]}, format="multipart")
    assert first.status_code == 201
    (created,) = first.json()["documents"]

    again = member_client.post(url, {"files": [upload_file("contract.txt")]}, format="multipart")
    assert again.status_code == 200
    (existing,) = again.json()["documents"]
    assert (existing["id"], existing["duplicate"]) == (created["id"], True)
    assert Document.objects.filter(case=case).count() == 1

    # With one new file beside it, something was created: 201.
    mixed = [upload_file("contract.txt"), upload_file("note.txt", b"A new note.")]
    both = member_client.post(url, {"files": mixed}, format="multipart")
    assert both.status_code == 201
    assert [d["duplicate"] for d in both.json()["documents"]] == [True, False]


# --- the query endpoints' two bodies ---------------------------------------------------------------


def test_an_error_says_confidence_and_an_answer_confidence_score(schema):
    components = schema["components"]["schemas"]
    assert "confidence" in components["QueryError"]["required"]
    assert "confidence_score" in components["QueryResult"]["properties"]
    assert "confidence_score" in components["QueryError"]["properties"]["confidence"]["description"]


def test_each_streamed_event_matches_the_documented_event(schema, viewer_client, corpus):
    # Schemathesis validates each Server-Sent Event ({"event", "data"}) against this schema.
    content = schema["paths"][QUERY]["post"]["responses"]["200"]["content"]["text/event-stream"]
    validator = jsonschema.Draft4Validator(content["schema"])
    response = viewer_client.post(QUERY, {"query": QUESTION, "stream": True}, format="json")
    blocks = b"".join(response.streaming_content).decode().strip().split("\n\n")
    events = [dict(line.split(": ", 1) for line in block.splitlines()) for block in blocks]
    assert events[0]["event"] == "meta" and events[-1]["event"] == "result"
    for event in events:
        validator.validate(event)
