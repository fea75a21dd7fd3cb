"""Document endpoints: upload (all-or-nothing), list and filter, status, delete and reindex; roles,
tenants and bad input; one upload through a real Celery worker."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.middleware.csrf import get_token
from django.test import RequestFactory
from django.utils import timezone
from rest_framework.test import APIClient

from rag import selectors
from rag.models import Chunk, Document, DocumentStatus
from tenants.models import Role
from tests.api.conftest_docs import *  # noqa: F403  (fixtures)
from tests.api.conftest_docs import CASES, DOCUMENTS, stored_files, upload_file
from tests.factories import MembershipFactory
from tests.rag.conftest import fixture_bytes

pytestmark = pytest.mark.django_db

DOCUMENT_KEYS = {
    *("id", "case_id", "title", "original_filename", "mime_type", "size_bytes", "sha256"),
    *("source_type", "doc_type", "jurisdiction", "document_date", "sensitivity", "metadata"),
    *("status", "stage", "progress", "error_type", "error_message", "page_count", "chunk_count"),
    *("created_at", "updated_at", "indexed_at", "uploaded_by", "parent_id", "attachment_ids"),
    *("ocr_confidence", "attachments"),
}


def _upload_url(case) -> str:
    return f"{CASES}/{case.pk}/documents"


def _post_files(client, case, files, **fields):
    return client.post(_upload_url(case), {"files": files, **fields}, format="multipart")


def _assert_nothing_stored(case) -> None:
    assert not Document.objects.filter(case=case).exists()
    assert stored_files() == []


# --- POST cases/<id>/documents -------------------------------------------------------------------


def test_upload_one_file_returns_it_queued_then_it_becomes_ready(case, member_client, committed):
    with committed():
        response = _post_files(member_client, case, [upload_file("contract.pdf")])
        assert response.status_code == 201
        (document,) = response.json()["documents"]
        # Answered before ingestion ran (it runs once the request's transaction commits).
        assert (document["status"], document["progress"], document["duplicate"]) == ("queued", 0, False)
    assert set(document) == DOCUMENT_KEYS | {"duplicate"}
    assert document["case_id"] == case.pk
    assert (document["title"], document["original_filename"]) == ("contract", "contract.pdf")
    assert document["mime_type"] == "application/pdf"
    assert document["size_bytes"] == len(fixture_bytes("contract.pdf"))
    assert document["uploaded_by"] is None  # an API key is no user
    assert (document["source_type"], document["doc_type"], document["sensitivity"]) == (
        "user_upload",
        "other",
        "internal",
    )

    ready = member_client.get(f"{DOCUMENTS}/{document['id']}").json()
    assert (ready["status"], ready["progress"], ready["stage"]) == ("ready", 100, "")
    assert ready["chunk_count"] > 0 and ready["page_count"] == 3 and ready["indexed_at"]
    assert len(stored_files()) == 1


def test_upload_several_files_with_shared_metadata(case, member_client):
    files = [upload_file(name) for name in ("contract.txt", "contract.pdf", "contract.docx")]
    response = _post_files(
        member_client,
        case,
        files,
        source_type="statute",
        doc_type="contract",
        jurisdiction="Delaware",
        document_date="2021-03-04",
        sensitivity="confidential",
        metadata=json.dumps({"party": "Acme", "year": 2021}),
    )
    assert response.status_code == 201
    documents = response.json()["documents"]
    assert [d["original_filename"] for d in documents] == ["contract.txt", "contract.pdf", "contract.docx"]
    for document in documents:
        assert (document["source_type"], document["doc_type"], document["jurisdiction"]) == (
            "statute",
            "contract",
            "Delaware",
        )
        assert (document["document_date"], document["sensitivity"]) == ("2021-03-04", "confidential")
        assert document["metadata"] == {"party": "Acme", "year": 2021}
    assert Document.objects.filter(case=case, doc_type="contract").count() == 3
    assert len(stored_files()) == 3


def test_title_is_taken_for_a_single_file(case, member_client):
    response = _post_files(
        member_client, case, [upload_file("contract.txt")], title="Master Services Agreement"
    )
    assert response.status_code == 201
    assert response.json()["documents"][0]["title"] == "Master Services Agreement"


SPONSORSHIP = (
    b"SPONSORSHIP AGREEMENT This Sponsorship Agreement is made by and between Excite, Inc., a Delaware "
    b'corporation ("Excite"), and NetGrocer, Inc., a Delaware corporation ("Sponsor"). 1. Term. One year.'
)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ({}, "Sponsorship Agreement — Excite / NetGrocer"),  # derived once the text is read
        ({"title": "NetGrocer sponsorship"}, "NetGrocer sponsorship"),  # the user's, kept
    ],
)
def test_upload_ends_ready_titled_by_its_user_or_its_text(case, member_client, committed, title, expected):
    with committed():
        response = _post_files(member_client, case, [upload_file("deal.txt", SPONSORSHIP)], **title)
        (document,) = response.json()["documents"]
        assert document["title"] == title.get("title", "deal")  # the file name's, until the text is read
    ready = member_client.get(f"{DOCUMENTS}/{document['id']}").json()
    assert (ready["status"], ready["title"]) == ("ready", expected)
    listed = member_client.get(DOCUMENTS, {"q": "NetGrocer"}).json()["results"]
    assert [d["title"] for d in listed] == [expected]


def test_the_same_bytes_again_return_the_existing_document(case, member_client):
    first = _post_files(member_client, case, [upload_file("contract.txt")]).json()["documents"][0]
    again = _post_files(member_client, case, [upload_file("contract.txt", fixture_bytes("contract.txt"))])
    assert again.status_code == 200  # nothing new was stored
    (duplicate,) = again.json()["documents"]
    assert (duplicate["id"], duplicate["duplicate"]) == (first["id"], True)
    # Twice in one request: one document.
    twice = _post_files(member_client, case, [upload_file("contract.pdf"), upload_file("contract.pdf")])
    a, b = twice.json()["documents"]
    assert (a["duplicate"], b["duplicate"], a["id"]) == (False, True, b["id"])
    assert Document.objects.filter(case=case).count() == 2
    assert len(stored_files()) == 2


def test_one_bad_file_refuses_the_whole_upload_and_stores_nothing(case, member_client):
    gif = b"GIF89a" + bytes(64)  # images other than PNG/JPEG/TIFF (read by OCR) are refused
    files = [upload_file("contract.txt"), upload_file("image.gif", gif), upload_file("empty.txt", b"")]
    response = _post_files(member_client, case, files)
    # The first bad file's error decides the status; details name every bad file.
    assert response.status_code == 415
    body = response.json()
    assert body["error_type"] == "UnsupportedMediaType"
    assert "2 of 3 files" in body["message"]
    assert [(f["index"], f["filename"], f["error_type"]) for f in body["details"]["files"]] == [
        (1, "image.gif", "UnsupportedMediaType"),
        (2, "empty.txt", "EmptyFile"),
    ]
    assert all(f["message"] for f in body["details"]["files"])
    _assert_nothing_stored(case)


def test_an_empty_file_alone_is_400(case, member_client):
    response = _post_files(member_client, case, [upload_file("empty.txt", b"")])
    assert response.status_code == 400
    assert response.json()["error_type"] == "EmptyFile"
    assert response.json()["details"]["files"][0]["filename"] == "empty.txt"
    _assert_nothing_stored(case)


def test_a_file_over_the_size_limit_is_413(case, member_client, settings):
    settings.RAG_MAX_UPLOAD_MB = 1
    big = upload_file("big.txt", b"word " * (1024 * 1024 // 5 + 1))
    response = _post_files(member_client, case, [upload_file("contract.txt"), big])
    assert response.status_code == 413
    (bad,) = response.json()["details"]["files"]
    assert (bad["index"], bad["error_type"], bad["details"]) == (1, "PayloadTooLarge", {"limit_mb": 1})
    _assert_nothing_stored(case)


def test_more_files_than_allowed_is_413(case, member_client, settings):
    settings.RAG_MAX_FILES_PER_UPLOAD = 2
    files = lambda n: [upload_file(f"n{i}.txt", f"Note {i}.".encode()) for i in range(n)]  # noqa: E731
    response = _post_files(member_client, case, files(3))
    assert response.status_code == 413
    assert response.json()["error_type"] == "PayloadTooLarge"
    assert response.json()["details"] == {"files": 3, "limit": 2}
    _assert_nothing_stored(case)
    ok = _post_files(member_client, case, files(2))
    assert ok.status_code == 201 and len(ok.json()["documents"]) == 2


def test_more_files_than_django_parses_is_413_not_500(case, member_client):
    files = [upload_file(f"n{i}.txt", b"x") for i in range(django_settings.DATA_UPLOAD_MAX_NUMBER_FILES + 1)]
    response = _post_files(member_client, case, files)
    assert response.status_code == 413
    assert response.json()["error_type"] == "PayloadTooLarge"
    _assert_nothing_stored(case)


def test_title_with_several_files_is_400(case, member_client):
    response = _post_files(
        member_client, case, [upload_file("contract.txt"), upload_file("contract.pdf")], title="One title"
    )
    assert response.status_code == 400
    assert response.json()["error_type"] == "InvalidInput" and "title" in response.json()["details"]
    _assert_nothing_stored(case)


def test_no_files_is_400(case, member_client):
    response = member_client.post(_upload_url(case), {"doc_type": "contract"}, format="multipart")
    assert response.status_code == 400
    assert "files" in response.json()["details"]
    _assert_nothing_stored(case)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"metadata": "not json"}, "metadata"),
        ({"metadata": "[1, 2]"}, "metadata"),
        ({"source_type": "tabloid"}, "source_type"),
        ({"doc_type": "poem"}, "doc_type"),
        ({"sensitivity": "secret"}, "sensitivity"),
        ({"document_date": "yesterday"}, "document_date"),
        ({"jurisdiction": "j" * 101}, "jurisdiction"),
        ({"title": "t" * 301}, "title"),
        ({"files": "not a file"}, "files"),
    ],
)
def test_bad_fields_are_400_with_details(case, member_client, fields, field):
    payload = {"files": [upload_file("contract.txt")], **fields}
    response = member_client.post(_upload_url(case), payload, format="multipart")
    assert response.status_code == 400
    assert response.json()["error_type"] == "ValidationError"
    assert field in response.json()["details"]
    _assert_nothing_stored(case)


def test_a_json_body_is_415(case, member_client):
    response = member_client.post(_upload_url(case), {"files": []}, format="json")
    assert response.status_code == 415
    assert response.json()["error_type"] == "UnsupportedMediaType"


def test_viewer_cannot_upload(case, viewer_client):
    response = _post_files(viewer_client, case, [upload_file("contract.txt")])
    assert response.status_code == 403 and response.json()["error_type"] == "PermissionDenied"
    _assert_nothing_stored(case)


def test_upload_into_another_tenants_case_is_404(other_case, member_client):
    response = _post_files(member_client, other_case, [upload_file("contract.txt")])
    assert response.status_code == 404 and response.json()["error_type"] == "NotFound"
    _assert_nothing_stored(other_case)


def test_session_upload_needs_the_csrf_token(tenant, case):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username=user.username, password="correct horse battery staple")

    refused = _post_files(client, case, [upload_file("contract.txt")])
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["message"]
    _assert_nothing_stored(case)

    request = RequestFactory().get("/")
    token = get_token(request)
    client.cookies[django_settings.CSRF_COOKIE_NAME] = request.META["CSRF_COOKIE"]
    accepted = client.post(
        _upload_url(case),
        {"files": [upload_file("contract.txt")]},
        format="multipart",
        HTTP_X_CSRFTOKEN=token,
    )
    assert accepted.status_code == 201
    document = accepted.json()["documents"][0]
    assert document["uploaded_by"] == user.username
    assert Document.objects.get(pk=document["id"]).tenant == tenant


# --- GET documents, GET cases/<id>/documents ----------------------------------------------------


@pytest.fixture
def catalogue(tenant, case, other_case, queued_document):
    """Documents of two cases of the tenant (and one of another tenant) with distinct fields."""
    from rag import services as rag_services

    second = rag_services.case_create(tenant=tenant, name="Second matter")
    docs = {
        "msa": queued_document(
            case, "msa.txt", title="Master Services Agreement", doc_type="contract", jurisdiction="Delaware"
        ),
        "act": queued_document(
            case, "act.txt", source_type="statute", doc_type="act", sensitivity="public", jurisdiction="India"
        ),
        "memo": queued_document(second, "memo.txt", doc_type="memo", sensitivity="confidential"),
        "foreign": queued_document(other_case, "foreign.txt", doc_type="contract"),
    }
    Document.objects.filter(pk=docs["act"].pk).update(status=DocumentStatus.READY)
    now = timezone.now()
    for age, key in ((30, "msa"), (20, "act"), (10, "memo")):
        Document.objects.filter(pk=docs[key].pk).update(created_at=now - timedelta(days=age))
    docs["second_case"] = second
    return docs


def _ids(response) -> list[int]:
    assert response.status_code == 200, response.json()
    return [row["id"] for row in response.json()["results"]]


def test_list_is_the_tenants_documents_newest_first(viewer_client, catalogue):
    response = viewer_client.get(DOCUMENTS)
    assert _ids(response) == [catalogue[k].pk for k in ("memo", "act", "msa")]
    assert set(response.json()["results"][0]) == DOCUMENT_KEYS
    assert response.json()["count"] == 3


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"status": "ready"}, ["act"]),
        ({"status": "queued"}, ["memo", "msa"]),
        ({"doc_type": "contract"}, ["msa"]),
        ({"source_type": "statute"}, ["act"]),
        ({"jurisdiction": "delaware"}, ["msa"]),
        ({"sensitivity": "confidential"}, ["memo"]),
        ({"q": "services"}, ["msa"]),
        ({"q": "MEMO.TXT"}, ["memo"]),
        ({"doc_type": "contract", "status": "ready"}, []),
        ({"jurisdiction": ""}, ["memo", "act", "msa"]),
    ],
)
def test_list_filters(viewer_client, catalogue, params, expected):
    assert _ids(viewer_client.get(DOCUMENTS, params)) == [catalogue[k].pk for k in expected]


def test_list_filters_by_case_and_upload_time(viewer_client, catalogue):
    second = catalogue["second_case"]
    assert _ids(viewer_client.get(DOCUMENTS, {"case_id": second.pk})) == [catalogue["memo"].pk]
    # Another tenant's case filters to nothing rather than leaking or erroring.
    assert _ids(viewer_client.get(DOCUMENTS, {"case_id": catalogue["foreign"].case_id})) == []
    now = timezone.now()
    after = (now - timedelta(days=25)).isoformat()
    before = (now - timedelta(days=15)).isoformat()
    assert _ids(viewer_client.get(DOCUMENTS, {"uploaded_after": after})) == [
        catalogue["memo"].pk,
        catalogue["act"].pk,
    ]
    assert _ids(viewer_client.get(DOCUMENTS, {"uploaded_before": before})) == [
        catalogue["act"].pk,
        catalogue["msa"].pk,
    ]
    both = viewer_client.get(DOCUMENTS, {"uploaded_after": after, "uploaded_before": before})
    assert _ids(both) == [catalogue["act"].pk]
    day = (now - timedelta(days=25)).date().isoformat()  # a date alone means its midnight
    assert catalogue["msa"].pk not in _ids(viewer_client.get(DOCUMENTS, {"uploaded_after": day}))


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "done"}, "status"),
        ({"doc_type": "poem"}, "doc_type"),
        ({"source_type": "blog"}, "source_type"),
        ({"sensitivity": "secret"}, "sensitivity"),
        ({"case_id": "abc"}, "case_id"),
        ({"case_id": "0"}, "case_id"),
        ({"uploaded_after": "last week"}, "uploaded_after"),
        ({"uploaded_before": "2024-13-40"}, "uploaded_before"),
        ({"uploaded_after": "2024-02-01", "uploaded_before": "2024-01-01"}, "uploaded_before"),
        ({"q": "x" * 301}, "q"),
    ],
)
def test_bad_filters_are_400_with_details(viewer_client, catalogue, params, field):
    for url in (DOCUMENTS, f"{CASES}/{catalogue['msa'].case_id}/documents"):
        if url != DOCUMENTS and field == "case_id":
            continue  # the case's list takes its case from the path
        response = viewer_client.get(url, params)
        assert response.status_code == 400
        assert response.json()["error_type"] == "ValidationError"
        assert field in response.json()["details"]


def test_list_pages(viewer_client, catalogue):
    page = viewer_client.get(DOCUMENTS, {"page_size": 2}).json()
    assert (page["count"], len(page["results"])) == (3, 2)
    assert _ids(viewer_client.get(page["next"])) == [catalogue["msa"].pk]
    assert viewer_client.get(DOCUMENTS, {"page": 3, "page_size": 2}).status_code == 404


def test_case_documents_lists_one_case_with_filters(viewer_client, case, catalogue):
    url = f"{CASES}/{case.pk}/documents"
    assert _ids(viewer_client.get(url)) == [catalogue["act"].pk, catalogue["msa"].pk]
    assert _ids(viewer_client.get(url, {"doc_type": "contract"})) == [catalogue["msa"].pk]
    assert _ids(viewer_client.get(url, {"doc_type": "memo"})) == []


def test_case_documents_of_another_tenants_case_is_404(viewer_client, other_case, catalogue):
    response = viewer_client.get(f"{CASES}/{other_case.pk}/documents")
    assert response.status_code == 404 and response.json()["error_type"] == "NotFound"
    assert viewer_client.get(f"{CASES}/999999/documents").status_code == 404


# --- GET documents/<id> --------------------------------------------------------------------------


def test_document_detail_has_metadata_and_state_but_never_text(case, viewer_client, ingested_document):
    document = ingested_document(case, "contract.txt")
    response = viewer_client.get(f"{DOCUMENTS}/{document.pk}")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == DOCUMENT_KEYS  # no "text"
    assert (body["status"], body["progress"], body["error_type"], body["error_message"]) == (
        "ready",
        100,
        "",
        "",
    )
    assert body["sha256"] == document.sha256 and body["chunk_count"] == document.chunk_count > 0
    assert document.text and document.text not in response.content.decode()


def test_a_failed_document_says_why(case, member_client, committed):
    with committed():
        response = _post_files(member_client, case, [upload_file("encrypted.pdf")])
    assert response.status_code == 201  # accepted: the problem shows only when reading it
    body = member_client.get(f"{DOCUMENTS}/{response.json()['documents'][0]['id']}").json()
    assert (body["status"], body["error_type"], body["progress"]) == ("failed", "EncryptedDocument", 0)
    assert "password" in body["error_message"]


def test_another_tenants_document_is_404_like_a_missing_one(other_case, member_client, queued_document):
    foreign = queued_document(other_case)
    for response in (
        member_client.get(f"{DOCUMENTS}/{foreign.pk}"),
        member_client.get(f"{DOCUMENTS}/999999"),
        member_client.delete(f"{DOCUMENTS}/{foreign.pk}"),
        member_client.post(f"{DOCUMENTS}/{foreign.pk}/reindex"),
        member_client.post(f"{CASES}/{other_case.pk}/reindex"),
    ):
        assert response.status_code == 404
        assert response.json()["error_type"] == "NotFound"
    foreign.refresh_from_db()
    assert foreign.status == DocumentStatus.QUEUED


# --- DELETE documents/<id> -----------------------------------------------------------------------


def test_delete_removes_the_document_its_chunks_and_file(
    tenant, case, member_client, ingested_document, committed
):
    document = ingested_document(case, "contract.txt")
    assert Chunk.objects.filter(document=document).exists() and len(stored_files()) == 1
    version = selectors.index_version_get(tenant=tenant)
    with committed():
        response = member_client.delete(f"{DOCUMENTS}/{document.pk}")
    assert response.status_code == 204
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(document_id=document.pk).exists()
    assert stored_files() == []
    assert selectors.index_version_get(tenant=tenant) == version + 1
    assert member_client.get(f"{DOCUMENTS}/{document.pk}").status_code == 404


def test_viewer_cannot_delete_or_reindex(case, viewer_client, queued_document):
    document = queued_document(case)
    for response in (
        viewer_client.delete(f"{DOCUMENTS}/{document.pk}"),
        viewer_client.post(f"{DOCUMENTS}/{document.pk}/reindex"),
        viewer_client.post(f"{CASES}/{case.pk}/reindex"),
    ):
        assert response.status_code == 403
        assert response.json()["error_type"] == "PermissionDenied"
    assert Document.objects.filter(pk=document.pk).exists()


# --- POST documents/<id>/reindex, POST cases/<id>/reindex ---------------------------------------


def test_reindex_a_document(case, member_client, ingested_document, committed):
    document = ingested_document(case, "contract.txt")
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.FAILED, error_type="X")
    with committed():
        response = member_client.post(f"{DOCUMENTS}/{document.pk}/reindex")
        assert response.status_code == 202
        body = response.json()
        assert set(body) == DOCUMENT_KEYS
        assert (body["id"], body["status"], body["progress"]) == (document.pk, "queued", 0)
    document.refresh_from_db()
    assert (document.status, document.error_type) == (DocumentStatus.READY, "")


def test_reindex_a_case_queues_each_document(case, member_client, queued_document, committed):
    docs = [queued_document(case, "a.txt"), queued_document(case, "b.txt")]
    Document.objects.filter(case=case).update(status=DocumentStatus.FAILED)
    with committed():
        response = member_client.post(f"{CASES}/{case.pk}/reindex")
    assert response.status_code == 202
    assert response.json() == {"queued": 2}
    assert {d.status for d in Document.objects.filter(pk__in=[d.pk for d in docs])} == {DocumentStatus.READY}


def test_reindex_a_missing_case_or_document_is_404(member_client):
    assert member_client.post(f"{CASES}/999999/reindex").status_code == 404
    assert member_client.post(f"{DOCUMENTS}/999999/reindex").status_code == 404


# --- Through a real worker ----------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.slow
def test_api_upload_is_ingested_by_a_real_worker(celery_worker, tenant, make_key_client):
    from rag import services as rag_services

    case = rag_services.case_create(tenant=tenant, name="Worker matter")
    client = make_key_client(tenant, Role.MEMBER)
    response = _post_files(client, case, [upload_file("contract.docx")], doc_type="contract")
    assert response.status_code == 201
    document_id = response.json()["documents"][0]["id"]

    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        body = client.get(f"{DOCUMENTS}/{document_id}").json()
        assert 0 <= body["progress"] <= 100
        if body["status"] in ("ready", "failed"):
            break
        time.sleep(0.25)
    assert body["status"] == "ready", (body["error_type"], body["error_message"])
    assert body["progress"] == 100 and body["chunk_count"] > 0 and body["doc_type"] == "contract"
    assert body["chunk_count"] == Chunk.objects.filter(document_id=document_id).count()


# --- Rollback of a batch that fails while being stored ------------------------------------------


def test_a_failure_while_storing_rolls_back_rows_and_files(case, member_client, queued_document, monkeypatch):
    """Every file passed the checks, then storing one failed: the rows roll back, the files stored
    for them are deleted, and a failed document the batch was retrying keeps its file."""
    from rag.ingest import service

    retried = queued_document(case, "contract.txt", content=fixture_bytes("contract.txt"))
    Document.objects.filter(pk=retried.pk).update(status=DocumentStatus.FAILED)
    (retried_file,) = stored_files()
    real_upload, calls = service.document_upload, []

    def fails_on_the_third(**kwargs):
        calls.append(kwargs["filename"])
        if len(calls) == 3:
            raise RuntimeError("disk full")
        return real_upload(**kwargs)

    monkeypatch.setattr(service, "document_upload", fails_on_the_third)
    files = [upload_file("contract.pdf"), upload_file("contract.txt"), upload_file("contract.docx")]
    response = _post_files(member_client, case, files)
    assert response.status_code == 500
    assert calls == ["contract.pdf", "contract.txt", "contract.docx"]
    assert list(Document.objects.filter(case=case).values_list("pk", flat=True)) == [retried.pk]
    assert stored_files() == [retried_file]
    retried.refresh_from_db()
    assert retried.status == DocumentStatus.FAILED  # its requeue rolled back with the rest


def test_ids_beyond_the_database_range_are_404(member_client, viewer_client):
    huge = 10**30
    assert viewer_client.get(f"{DOCUMENTS}/{huge}").status_code == 404
    assert member_client.post(f"{CASES}/{huge}/reindex").status_code == 404
    assert viewer_client.get(f"{CASES}/{huge}/documents").status_code == 404
    assert _ids(viewer_client.get(DOCUMENTS, {"case_id": huge})) == []
