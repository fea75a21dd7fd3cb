"""Case endpoints: list/filter, create, read, update, delete; roles, tenants and bad input."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from rag import selectors
from rag import services as rag_services
from rag.models import Case, Chunk, Document
from tenants.models import Role
from tests.api.conftest_docs import *  # noqa: F403  (fixtures)
from tests.api.conftest_docs import CASES, stored_files

pytestmark = pytest.mark.django_db

CASE_KEYS = {"id", "name", "client", "description", "created_at", "updated_at", "document_count"}


# --- GET cases -----------------------------------------------------------------------------------


def test_list_pages_cases_by_name_with_document_counts(tenant, other_case, viewer_client, queued_document):
    zulu = rag_services.case_create(tenant=tenant, name="Zulu matter", client="Zulu Inc")
    alpha = rag_services.case_create(tenant=tenant, name="Alpha matter")
    queued_document(zulu, "a.txt")
    queued_document(zulu, "b.txt")

    response = viewer_client.get(CASES)
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2  # the other tenant's case is not listed
    assert [row["name"] for row in body["results"]] == ["Alpha matter", "Zulu matter"]
    assert set(body["results"][0]) == CASE_KEYS
    assert {row["id"]: row["document_count"] for row in body["results"]} == {alpha.pk: 0, zulu.pk: 2}

    first = viewer_client.get(CASES, {"page_size": 1}).json()
    assert (first["count"], len(first["results"]), first["previous"]) == (2, 1, None)
    assert viewer_client.get(first["next"]).json()["results"][0]["name"] == "Zulu matter"


def test_list_q_matches_name_or_client_in_any_case(tenant, viewer_client):
    rag_services.case_create(tenant=tenant, name="Merger review", client="Initech")
    rag_services.case_create(tenant=tenant, name="Lease dispute", client="Umbrella Corp")
    names = lambda q: [r["name"] for r in viewer_client.get(CASES, {"q": q}).json()["results"]]  # noqa: E731
    assert names("MERGER") == ["Merger review"]
    assert names("umbrella") == ["Lease dispute"]
    assert names("nothing like it") == []
    assert len(names("")) == 2


def test_list_bad_page_is_404_and_long_q_is_400(viewer_client, case):
    response = viewer_client.get(CASES, {"page": 99})
    assert response.status_code == 404 and response.json()["error_type"] == "NotFound"
    response = viewer_client.get(CASES, {"q": "x" * 201})
    assert response.status_code == 400 and "q" in response.json()["details"]


def test_list_needs_credentials(case):
    response = APIClient().get(CASES)
    assert response.status_code == 401 and response.json()["error_type"] == "NotAuthenticated"


# --- POST cases ----------------------------------------------------------------------------------


def test_member_creates_a_case(tenant, member_client):
    payload = {"name": "Acme v. Initech", "client": "Acme", "description": "Breach of NDA."}
    response = member_client.post(CASES, payload, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == CASE_KEYS
    assert {k: body[k] for k in payload} == payload and body["document_count"] == 0
    stored = Case.objects.get(pk=body["id"])
    assert (stored.tenant, stored.name, stored.created_by) == (tenant, "Acme v. Initech", None)


def test_client_and_description_are_optional(member_client):
    response = member_client.post(CASES, {"name": "Bare"}, format="json")
    assert response.status_code == 201
    assert (response.json()["client"], response.json()["description"]) == ("", "")


def test_duplicate_name_is_409_but_another_tenant_may_use_it(
    tenant, other_tenant, case, member_client, make_key_client
):
    response = member_client.post(CASES, {"name": case.name}, format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["error_type"] == "Conflict" and "name" in body["details"]
    assert Case.objects.filter(tenant=tenant, name=case.name).count() == 1

    elsewhere = make_key_client(other_tenant, Role.MEMBER).post(CASES, {"name": case.name}, format="json")
    assert elsewhere.status_code == 201


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "ok", "client": "c" * 201}, "client"),
        ({"name": "ok\x00"}, "name"),
    ],
)
def test_create_bad_input_is_400_with_field_details(tenant, member_client, payload, field):
    response = member_client.post(CASES, payload, format="json")
    assert response.status_code == 400
    assert response.json()["error_type"] == "ValidationError"
    assert field in response.json()["details"]
    assert not Case.objects.filter(tenant=tenant).exists()


def test_viewer_cannot_create(tenant, viewer_client):
    response = viewer_client.post(CASES, {"name": "Nope"}, format="json")
    assert response.status_code == 403 and response.json()["error_type"] == "PermissionDenied"
    assert not Case.objects.filter(tenant=tenant).exists()


def test_tenant_id_in_body_must_be_ones_own(tenant, member_client):
    refused = member_client.post(CASES, {"name": "X", "tenant_id": "globex-legal"}, format="json")
    assert refused.status_code == 403
    assert not Case.objects.filter(tenant=tenant).exists()
    assert member_client.post(CASES, {"name": "X", "tenant_id": "acme-law"}, format="json").status_code == 201


def test_session_user_is_recorded_as_creator(tenant, member):
    client = APIClient()
    client.force_login(member)
    response = client.post(CASES, {"name": "By a person"}, format="json")
    assert response.status_code == 201
    assert Case.objects.get(pk=response.json()["id"]).created_by == member


# --- GET cases/<id> ------------------------------------------------------------------------------


def test_retrieve_a_case_with_its_document_count(case, viewer_client, queued_document):
    queued_document(case)
    response = viewer_client.get(f"{CASES}/{case.pk}")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == CASE_KEYS
    assert (body["id"], body["name"], body["client"], body["document_count"]) == (
        case.pk,
        "Acme v. Globex",
        "Acme Corp",
        1,
    )


def test_another_tenants_case_is_404_like_a_missing_one(other_case, viewer_client, member_client):
    for response in (
        viewer_client.get(f"{CASES}/{other_case.pk}"),
        viewer_client.get(f"{CASES}/999999"),
        member_client.patch(f"{CASES}/{other_case.pk}", {"name": "Mine now"}, format="json"),
        member_client.put(f"{CASES}/{other_case.pk}", {"name": "Mine now"}, format="json"),
        member_client.delete(f"{CASES}/{other_case.pk}"),
    ):
        assert response.status_code == 404
        assert response.json()["error_type"] == "NotFound"
    other_case.refresh_from_db()
    assert other_case.name == "Globex matter"


# --- PATCH / PUT cases/<id> ----------------------------------------------------------------------


def test_patch_changes_only_what_is_sent(case, member_client):
    response = member_client.patch(
        f"{CASES}/{case.pk}", {"description": "Now with a summary."}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["name"], body["client"], body["description"]) == (
        "Acme v. Globex",
        "Acme Corp",
        "Now with a summary.",
    )
    case.refresh_from_db()
    assert case.description == "Now with a summary." and case.client == "Acme Corp"


def test_put_replaces_the_case(case, member_client):
    response = member_client.put(f"{CASES}/{case.pk}", {"name": "Acme v. Globex (appeal)"}, format="json")
    assert response.status_code == 200
    case.refresh_from_db()
    assert (case.name, case.client, case.description) == ("Acme v. Globex (appeal)", "", "")


def test_put_without_a_name_is_400(case, member_client):
    response = member_client.put(f"{CASES}/{case.pk}", {"client": "Someone"}, format="json")
    assert response.status_code == 400 and "name" in response.json()["details"]


def test_renaming_to_a_taken_name_is_409(tenant, case, member_client):
    other = rag_services.case_create(tenant=tenant, name="Second matter")
    for method in (member_client.patch, member_client.put):
        response = method(f"{CASES}/{other.pk}", {"name": case.name}, format="json")
        assert response.status_code == 409 and response.json()["error_type"] == "Conflict"
    other.refresh_from_db()
    assert other.name == "Second matter"
    # Keeping one's own name is no conflict.
    assert member_client.patch(f"{CASES}/{case.pk}", {"name": case.name}, format="json").status_code == 200


@pytest.mark.parametrize("payload", [{"name": ""}, {"name": "x" * 201}, {"client": "c" * 201}])
def test_patch_bad_input_is_400(case, member_client, payload):
    response = member_client.patch(f"{CASES}/{case.pk}", payload, format="json")
    assert response.status_code == 400
    assert set(payload) <= set(response.json()["details"])


def test_viewer_cannot_update_or_delete(case, viewer_client):
    for response in (
        viewer_client.patch(f"{CASES}/{case.pk}", {"name": "Renamed"}, format="json"),
        viewer_client.put(f"{CASES}/{case.pk}", {"name": "Renamed"}, format="json"),
        viewer_client.delete(f"{CASES}/{case.pk}"),
    ):
        assert response.status_code == 403
    case.refresh_from_db()
    assert case.name == "Acme v. Globex"


# --- DELETE cases/<id> ---------------------------------------------------------------------------


def test_delete_removes_documents_chunks_and_files_and_bumps_the_index_version(
    tenant, case, member_client, ingested_document, committed
):
    kept_case = rag_services.case_create(tenant=tenant, name="Kept matter")
    kept = ingested_document(kept_case, "contract.txt")
    doomed = [ingested_document(case, "contract.pdf"), ingested_document(case, "contract.docx")]
    assert Chunk.objects.filter(case=case).exists()
    assert len(stored_files()) == 3
    version = selectors.index_version_get(tenant=tenant)

    with committed():
        response = member_client.delete(f"{CASES}/{case.pk}")
    assert response.status_code == 204
    assert response.content == b""
    assert not Case.objects.filter(pk=case.pk).exists()
    assert not Document.objects.filter(pk__in=[d.pk for d in doomed]).exists()
    assert not Chunk.objects.filter(case_id=case.pk).exists()
    assert selectors.index_version_get(tenant=tenant) == version + 1
    # Only the other case's file is left, and its document and chunks are untouched.
    assert [p.name for p in stored_files()] == [kept.file.name.rsplit("/", 1)[-1]]
    assert Chunk.objects.filter(document=kept).count() == kept.chunk_count > 0
    assert member_client.get(f"{CASES}/{case.pk}").status_code == 404


def test_delete_of_an_empty_case(tenant, case, member_client):
    version = selectors.index_version_get(tenant=tenant)
    assert member_client.delete(f"{CASES}/{case.pk}").status_code == 204
    assert not Case.objects.filter(pk=case.pk).exists()
    assert selectors.index_version_get(tenant=tenant) == version + 1


def test_files_stay_when_the_delete_rolls_back(tenant, case, ingested_document, monkeypatch, committed):
    """Stored files go only once the delete commits: a failure inside it keeps rows and files."""
    from rag.ingest import service

    ingested_document(case, "contract.txt")

    def broken(**_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(service, "bump_index_version", broken)
    with committed(), pytest.raises(RuntimeError):
        rag_services.case_delete(tenant=tenant, case_id=case.pk)
    assert Case.objects.filter(pk=case.pk).exists()
    assert Document.objects.filter(case=case).count() == 1
    assert len(stored_files()) == 1


def test_case_delete_service_refuses_another_tenants_case(other_tenant, case):
    from ragsite.exceptions import NotFound

    with pytest.raises(NotFound):
        rag_services.case_delete(tenant=other_tenant, case_id=case.pk)
    assert Case.objects.filter(pk=case.pk).exists()
