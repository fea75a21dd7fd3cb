"""A batch's progress in one request (#36): the document lists filtered by `?id=` repeated give the
status and progress of exactly the documents asked for that the caller may see; another tenant's
document and one in a case walled off from the caller are simply not listed, as on every list."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from rag import services as rag_services
from rag.models import Document, DocumentStatus
from tenants.models import Role
from tests.api.conftest_docs import *  # noqa: F403  (fixtures)
from tests.api.conftest_docs import CASES, DOCUMENTS
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


def _listed(client, url, ids) -> dict[int, dict]:
    response = client.get(url, {"id": ids})
    assert response.status_code == 200, response.json()
    return {row["id"]: row for row in response.json()["results"]}


@pytest.fixture
def batch(tenant, case, queued_document):
    """Three documents of a case at different stages, and one more the batch does not ask about."""
    docs = [queued_document(case, f"file{n}.txt") for n in range(4)]
    Document.objects.filter(pk=docs[0].pk).update(status=DocumentStatus.READY, progress=100)
    processing = {"status": DocumentStatus.PROCESSING, "progress": 40, "stage": "embedding"}
    Document.objects.filter(pk=docs[1].pk).update(**processing)
    Document.objects.filter(pk=docs[2].pk).update(status=DocumentStatus.FAILED, error_message="Unreadable.")
    return docs


def test_one_request_reads_the_state_of_every_document_asked(viewer_client, case, batch):
    ids = [doc.pk for doc in batch[:3]]
    for url in (DOCUMENTS, f"{CASES}/{case.pk}/documents"):
        rows = _listed(viewer_client, url, ids)
        assert set(rows) == set(ids)  # not the fourth
        assert [rows[pk]["status"] for pk in ids] == ["ready", "processing", "failed"]
        assert (rows[ids[1]]["progress"], rows[ids[1]]["stage"]) == (40, "embedding")
        assert rows[ids[2]]["error_message"] == "Unreadable."


def test_another_tenants_document_is_not_listed(viewer_client, case, other_case, batch, queued_document):
    foreign = queued_document(other_case, "foreign.txt")
    asked = [batch[0].pk, foreign.pk]
    assert set(_listed(viewer_client, DOCUMENTS, asked)) == {batch[0].pk}
    assert set(_listed(viewer_client, f"{CASES}/{case.pk}/documents", asked)) == {batch[0].pk}
    # Nor is it listed for its own case's id: the case is another tenant's, so it is not found.
    response = viewer_client.get(f"{CASES}/{other_case.pk}/documents", {"id": [foreign.pk]})
    assert response.status_code == 404


def test_a_document_walled_off_from_the_reader_is_not_listed(tenant, case, batch, queued_document):
    walled_case = rag_services.case_create(tenant=tenant, name="Conflicted matter")
    walled = queued_document(walled_case, "secret.txt")
    insider = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    outsider = MembershipFactory(tenant=tenant, role=Role.ADMIN).user  # walls are not about rank
    rag_services.case_wall_set(tenant=tenant, case_id=walled_case.pk, walled=True, members=[insider])
    asked = [batch[0].pk, walled.pk]

    def client_of(user):
        client = APIClient()
        client.force_login(user)
        return client

    assert set(_listed(client_of(outsider), DOCUMENTS, asked)) == {batch[0].pk}
    assert client_of(outsider).get(f"{CASES}/{walled_case.pk}/documents", {"id": asked}).status_code == 404
    assert set(_listed(client_of(insider), DOCUMENTS, asked)) == set(asked)  # the control


@pytest.mark.parametrize("ids", [["abc"], ["0"], [str(2**63)], [str(n) for n in range(1, 202)]])
def test_bad_ids_are_400(viewer_client, case, ids):
    for url in (DOCUMENTS, f"{CASES}/{case.pk}/documents"):
        response = viewer_client.get(url, {"id": ids})
        assert response.status_code == 400
        assert "id" in response.json()["details"]


def test_two_hundred_ids_fit_one_page(viewer_client, case, batch):
    ids = [doc.pk for doc in batch] + list(range(10**9, 10**9 + 196))
    response = viewer_client.get(DOCUMENTS, {"id": ids, "page_size": 200})
    assert response.status_code == 200
    assert {row["id"] for row in response.json()["results"]} == {doc.pk for doc in batch}
