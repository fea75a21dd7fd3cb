"""Confidential documents for readers who may not read them (issue #33): no title made from their
text, no stored answer that outlives a revoked grant, and no renaming, moving, reindexing or
deleting of what one may not read."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.test import Client
from rest_framework.test import APIClient

from rag import services as case_services
from rag.models import Document, Sensitivity, TitleSource
from tenants.models import Role
from tests.factories import MembershipFactory

SETTLEMENT = (
    'SETTLEMENT AGREEMENT\n\nThis Settlement Agreement is made between Hooli Inc. ("Hooli") and Pied Piper '
    'Inc. ("Pied Piper").\n\n1. Payment. Hooli shall pay Pied Piper the settlement amount of $4,750,000 '
    "within thirty days.\n\n2. Release. Pied Piper releases all claims against Hooli."
)
QUESTION = "What settlement amount does Hooli pay?"


def _session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def settlement(case, ingest_text):
    return ingest_text(case, SETTLEMENT, filename="doc-0193.txt", sensitivity=Sensitivity.CONFIDENTIAL)


@pytest.mark.django_db
def test_an_untitled_confidential_document_is_titled_by_its_file_name(settlement, viewer_client):
    settlement.refresh_from_db()
    assert (settlement.title, settlement.title_source) == ("doc-0193", TitleSource.FILE_NAME)
    assert settlement.text_title == "Settlement Agreement — Hooli / Pied Piper"  # kept, not shown
    listed = viewer_client.get("/api/v1/rag/documents").content.decode()
    assert "doc-0193" in listed and "Hooli" not in listed and "Pied Piper" not in listed
    assert viewer_client.get("/api/v1/rag/documents", {"q": "Hooli"}).json()["count"] == 0


@pytest.mark.django_db
def test_the_title_follows_the_sensitivity(settlement, admin_client):
    internal = admin_client.patch(
        f"/api/v1/rag/documents/{settlement.pk}", {"sensitivity": "internal"}, format="json"
    )
    assert internal.json()["title"] == "Settlement Agreement — Hooli / Pied Piper"
    again = admin_client.patch(
        f"/api/v1/rag/documents/{settlement.pk}", {"sensitivity": "confidential"}, format="json"
    )
    assert again.json()["title"] == "doc-0193"
    titled = admin_client.patch(
        f"/api/v1/rag/documents/{settlement.pk}", {"title": "Matter 7"}, format="json"
    )
    assert titled.json()["title"] == "Matter 7"  # a title a person gives is theirs to give


EMAIL = (
    "From: General Counsel <gc@hooli.example>\r\nTo: CEO <ceo@hooli.example>\r\n"
    "Subject: Privileged: we will pay up to $6M to settle with Pied Piper\r\n"
    "Date: Fri, 15 Dec 2017 10:00:00 +0000\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
    "Our ceiling is six million dollars.\r\n"
)


@pytest.mark.django_db
def test_a_confidential_e_mail_is_not_titled_by_its_subject(case, ingest_text, viewer_client):
    email = ingest_text(case, EMAIL, filename="msg-22.eml", sensitivity=Sensitivity.CONFIDENTIAL)
    email.refresh_from_db()
    assert email.title == "msg-22"
    body = viewer_client.get(f"/api/v1/rag/documents/{email.pk}").content.decode()
    assert "$6M" not in body and "Pied Piper" not in body


@pytest.mark.django_db
def test_a_stored_answer_is_withheld_once_the_grant_is_removed(tenant, settlement):
    reader = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    settlement.confidential_readers.add(reader)
    client = _session(reader)
    answer = client.post("/api/v1/rag/query", {"query": QUESTION}, format="json").json()
    assert "4,750,000" in answer["answer"], answer
    request_id = answer["request_id"]

    settlement.confidential_readers.remove(reader)
    stored = client.get(f"/api/v1/rag/queries/{request_id}")
    assert stored.status_code == 200
    assert stored.json()["result"]["withheld"] is True
    assert stored.json()["result"]["citations"] == []
    page = Client()
    page.force_login(reader)
    surfaces = {
        "history": stored.content,
        "answer page": page.get(f"/ask/{request_id}/").content,
        "citations.txt": page.get(f"/ask/{request_id}/citations.txt").content,
        "export": client.get(f"/api/v1/rag/queries/{request_id}/export", {"as": "text"}).content,
        "memo.docx": _docx_text(page.get(f"/ask/{request_id}/memo.docx").content),
    }
    for name, content in surfaces.items():
        text = content.decode() if isinstance(content, bytes) else content
        assert "4,750,000" not in text and "Pied Piper releases" not in text, name

    settlement.confidential_readers.add(reader)  # access is decided when it is read
    again = client.get(f"/api/v1/rag/queries/{request_id}").json()["result"]
    assert "4,750,000" in again["answer"] and not again.get("withheld")


def _docx_text(content: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(content)) as docx:
        return docx.read("word/document.xml").decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("patch", "", {"title": "Renamed"}),
        ("patch", "", {"case_id": None}),  # filled with the other case below
        ("delete", "", None),
        ("post", "/reindex", None),
    ],
)
def test_a_member_may_not_change_a_confidential_document_they_may_not_read(
    tenant, case, settlement, member_client, admin_client, method, suffix, body
):
    if body == {"case_id": None}:
        body = {"case_id": case_services.case_create(tenant=tenant, name="Elsewhere").pk}
    url = f"/api/v1/rag/documents/{settlement.pk}{suffix}"
    before = Document.objects.values("title", "case_id", "status").get(pk=settlement.pk)
    refused = getattr(member_client, method)(url, body, format="json")
    assert refused.status_code == 403, refused.content
    assert refused.json()["error_type"] == "PermissionDenied"
    assert Document.objects.values("title", "case_id", "status").get(pk=settlement.pk) == before
    allowed = getattr(admin_client, method)(url, body, format="json")
    assert allowed.status_code < 300, allowed.content


@pytest.mark.django_db
def test_a_member_may_not_delete_a_case_holding_what_they_may_not_read(case, settlement, member_client):
    refused = member_client.delete(f"/api/v1/rag/cases/{case.pk}")
    assert refused.status_code == 403 and refused.json()["error_type"] == "PermissionDenied"
    assert Document.objects.filter(pk=settlement.pk).exists()
