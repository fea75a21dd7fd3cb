"""PATCH documents/<id>: descriptive fields change through `rag.ingest.edit.document_update`; the
passages follow at once, cached answers are invalidated, roles and tenants are enforced."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from rag import selectors
from rag.models import Chunk, TitleSource
from rag.services import case_create
from tenants.models import Role
from tests.api.conftest_docs import *  # noqa: F403  (fixtures)
from tests.api.conftest_docs import DOCUMENTS
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


def _url(document) -> str:
    return f"{DOCUMENTS}/{document.pk}"


def _chunk_values(document, *fields) -> set[tuple]:
    return set(Chunk.objects.filter(document=document).values_list(*fields))


def test_patch_changes_the_fields_sent_and_the_passages_follow(
    tenant, case, member_client, ingested_document
):
    document = ingested_document(case)
    version = selectors.index_version_get(tenant=tenant)
    response = member_client.patch(
        _url(document),
        {"title": "Master supply agreement", "doc_type": "contract", "jurisdiction": "Delaware"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["title"], body["doc_type"], body["jurisdiction"]) == (
        "Master supply agreement",
        "contract",
        "Delaware",
    )
    assert body["source_type"] == document.source_type  # not sent, not changed
    document.refresh_from_db()
    assert document.title_source == TitleSource.USER  # kept on reindexing
    assert _chunk_values(document, "doc_type", "jurisdiction") == {("contract", "Delaware")}
    assert selectors.index_version_get(tenant=tenant) > version


def test_patch_moves_the_document_and_its_passages_to_another_case(
    tenant, case, member_client, ingested_document
):
    document = ingested_document(case)
    target = case_create(tenant=tenant, name="Acme appeal")
    response = member_client.patch(_url(document), {"case_id": target.pk}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["case_id"] == target.pk
    assert _chunk_values(document, "case_id") == {(target.pk,)}


def test_patch_refuses_another_tenants_case_and_a_case_holding_the_same_file(
    tenant, case, other_case, member_client, queued_document
):
    document = queued_document(case, "a.txt", b"same bytes")
    target = case_create(tenant=tenant, name="Copy holder")
    queued_document(target, "b.txt", b"same bytes")
    other = member_client.patch(_url(document), {"case_id": other_case.pk}, format="json")
    assert other.status_code == 404
    taken = member_client.patch(_url(document), {"case_id": target.pk}, format="json")
    assert (taken.status_code, taken.json()["error_type"]) == (409, "Conflict")
    document.refresh_from_db()
    assert document.case_id == case.pk


def test_bad_values_are_400_and_change_nothing(case, member_client, queued_document):
    document = queued_document(case, title="Kept")
    for body in ({"doc_type": "poem"}, {"title": ""}, {"metadata": ["not", "an", "object"]}):
        response = member_client.patch(_url(document), body, format="json")
        assert (response.status_code, response.json()["error_type"]) == (400, "ValidationError"), body
        assert set(response.json()["details"]) == set(body)
    document.refresh_from_db()
    assert (document.title, document.doc_type, document.metadata) == ("Kept", "other", {})


def test_only_an_admin_may_lower_a_confidential_document(
    tenant, case, member_client, admin_client, queued_document
):
    document = queued_document(case, sensitivity="confidential")
    reader = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    document.confidential_readers.add(reader)
    listed = APIClient()
    listed.force_login(reader)
    for client in (member_client, listed):
        refused = client.patch(_url(document), {"sensitivity": "internal"}, format="json")
        assert (refused.status_code, refused.json()["error_type"]) == (403, "PermissionDenied")
    document.refresh_from_db()
    assert document.sensitivity == "confidential"
    # A member who may read it may rename it; one who may not, may not (a member's key reads none).
    assert listed.patch(_url(document), {"title": "Renamed"}, format="json").status_code == 200
    assert member_client.patch(_url(document), {"title": "Again"}, format="json").status_code == 403
    allowed = admin_client.patch(_url(document), {"sensitivity": "internal"}, format="json")
    assert (allowed.status_code, allowed.json()["sensitivity"]) == (200, "internal")


def test_viewer_and_other_tenant_cannot_patch(case, viewer_client, other_admin_client, queued_document):
    document = queued_document(case, title="Kept")
    assert viewer_client.patch(_url(document), {"title": "x"}, format="json").status_code == 403
    assert other_admin_client.patch(_url(document), {"title": "x"}, format="json").status_code == 404
    document.refresh_from_db()
    assert document.title == "Kept"
