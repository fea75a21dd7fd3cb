"""E-mails end to end: an uploaded .eml and its attachments become documents of the same case and
tenant (real extraction, embeddings and pgvector), linked by `parent`; duplicates, quotas, nesting,
deletion; the REST API and the staff UI show the link; another tenant finds none of it. The upload
stores the e-mail only; the ingestion job parses it and stores its attachments (#33), so the upload
answers `attachments: "pending"` and the e-mail says `extracted` (or `failed`) once its job ran."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from rag import selectors
from rag.ingest import service
from rag.models import Chunk, Document, DocumentStatus, TitleSource
from tenants.models import Role
from tests.api.conftest_docs import *  # noqa: F403  (fixtures)
from tests.api.conftest_docs import CASES, DOCUMENTS, stored_files
from tests.factories import MembershipFactory
from tests.rag.conftest import fixture_bytes
from tests.rag.ingest.email_messages import attach, attach_message, eml, message

pytestmark = pytest.mark.django_db

NOTE = b"Call Bob about the indemnity cap in clause 4 before Friday."
XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _email_with_attachments() -> bytes:
    """An e-mail carrying a PDF, a text note, a spreadsheet (unsupported) and a forwarded e-mail
    that carries a text file of its own."""
    forwarded = message(subject="Original offer", plain="We offer five million for the shares.")
    attach(forwarded, "offer terms.txt", b"Offer terms: five million, closing in June.", "text/plain")
    msg = message()
    attach(msg, "contract.pdf", fixture_bytes("contract.pdf"), "application/pdf")
    attach(msg, "notes.txt", NOTE, "text/plain")
    attach(msg, "budget.xlsx", b"PK\x03\x04 not really a spreadsheet \x00\x01", XLSX_MIME)
    attach_message(msg, forwarded)
    return eml(msg)


def _get(case, document_id) -> Document:
    return selectors.document_get(tenant=case.tenant, document_id=document_id)


def _family(case, email_id) -> list[Document]:
    """The e-mail and the documents split off it (nested e-mails' too), depth first, in the order
    they were stored."""
    family = [_get(case, email_id)]
    for attachment in selectors.document_attachments(tenant=case.tenant, document_id=email_id):
        family.extend(_family(case, attachment.pk))
    return family


def _assert_exact_offsets(document: Document) -> None:
    chunks = list(selectors.chunk_list(tenant=document.tenant, document_id=document.pk))
    assert chunks and document.chunk_count == len(chunks)
    for chunk in chunks:
        assert document.text[chunk.char_start : chunk.char_end] == chunk.text


def test_an_email_and_its_attachments_become_ready_documents_linked_to_it(case, upload):
    result = upload(case, "mail.eml", content=_email_with_attachments(), sensitivity="confidential")
    assert result.created and not result.duplicate
    every = _family(case, result.document.pk)
    assert [d.original_filename for d in every] == [
        "mail.eml",
        "contract.pdf",
        "notes.txt",
        "Original offer.eml",
        "offer terms.txt",
    ]
    email, pdf, notes, forwarded, terms = every
    assert [d.parent_id for d in (email, pdf, notes, forwarded, terms)] == [
        None,
        email.pk,
        email.pk,
        email.pk,
        forwarded.pk,
    ]
    for document in (email, pdf, notes, forwarded, terms):
        assert document.status == DocumentStatus.READY, document.error_message
        assert (document.tenant_id, document.case_id) == (case.tenant_id, case.pk)
        assert document.sensitivity == "confidential"  # an attachment is as sensitive as its e-mail
        _assert_exact_offsets(document)
    assert email.mime_type == "message/rfc822" and pdf.mime_type == "application/pdf"
    assert email.text.startswith("From: Alice Smith <alice@acme.example>\nTo: Bob Jones")
    assert email.text.endswith(
        "Attachments:\n- contract.pdf\n- notes.txt\n- budget.xlsx (not indexed: unsupported type)\n"
        "- Original offer.eml"
    )
    # Confidential: titled by its file name; the subject's title is kept for its readers (#33).
    assert (email.title, email.title_source) == ("mail", TitleSource.FILE_NAME)
    assert email.text_title == "Draft share purchase agreement — Alice Smith, 2025-03-04"
    assert email.document_date == date(2025, 3, 4)
    assert pdf.document_date is None  # the attachment's own, not the e-mail's
    # No type chosen: the e-mail is correspondence, its attachments "other".
    assert (email.doc_type, pdf.doc_type, forwarded.doc_type) == ("correspondence", "other", "correspondence")
    assert notes.text == NOTE.decode()
    assert "five million for the shares" in forwarded.text and forwarded.title.startswith("Original offer")
    assert not Document.objects.filter(case=case, original_filename="budget.xlsx").exists()


def test_an_email_uploaded_as_a_contract_is_correspondence_and_its_attachment_the_contract(case, upload):
    """The type chosen for an e-mail's upload ("Contract") is what it carries: a doc_type=contract
    search finds the attached contract, not the covering e-mail."""
    from rag.retrieval.filters import SearchFilters
    from rag.retrieval.service import retrieve

    msg = message(plain="Darren,\n\nThe signed supply agreement is attached.\n\nAlice")
    attach(msg, "supply.txt", b"SUPPLY AGREEMENT. The Supplier shall deliver widgets monthly.", "text/plain")
    result = upload(case, "mail.eml", content=eml(msg), doc_type="contract")
    email, contract = _family(case, result.document.pk)
    assert (email.doc_type, contract.doc_type) == ("correspondence", "contract")
    found = retrieve(
        tenant=case.tenant, query="supply agreement widgets", filters=SearchFilters(doc_types=("contract",))
    )
    assert {passage.document_id for passage in found.passages} == {contract.pk}


def test_the_uploaders_title_and_date_win_over_the_emails(case, upload):
    day = date(2025, 1, 2)
    result = upload(case, "mail.eml", content=eml(message()), title="SPA thread", document_date=day)
    email = _get(case, result.document.pk)
    assert (email.title, email.title_source, email.document_date) == ("SPA thread", "user", day)


def test_an_attachment_already_in_the_case_is_not_stored_twice(case, upload):
    standalone = upload(case, "notes.txt", content=NOTE).document
    msg = message()
    attach(msg, "notes.txt", NOTE, "text/plain")
    result = upload(case, "mail.eml", content=eml(msg))
    assert _family(case, result.document.pk) == [result.document]  # the note is the document it was
    assert _get(case, standalone.pk).parent_id is None  # left where it was
    assert Document.objects.filter(case=case).count() == 2
    assert "- notes.txt" in _get(case, result.document.pk).text  # still listed by the e-mail


def test_the_same_email_twice_is_one_email_with_one_set_of_attachments(case, upload):
    content = _email_with_attachments()  # (each call draws new MIME boundaries: other bytes)
    first = upload(case, "mail.eml", content=content)
    again = upload(case, "copy.eml", content=content)
    assert again.duplicate and again.document.pk == first.document.pk
    assert Document.objects.filter(case=case).count() == 5


@override_settings(RAG_EMAIL_MAX_DEPTH=1)
def test_below_the_depth_limit_attachments_stay_inside_the_forwarded_email(case, upload):
    result = upload(case, "mail.eml", content=_email_with_attachments())
    forwarded = _family(case, result.document.pk)[3]
    assert forwarded.original_filename == "Original offer.eml"
    assert _family(case, forwarded.pk) == [forwarded]
    text = forwarded.text
    assert text.endswith("- offer terms.txt (not indexed: nested too deep (limit 1))")
    assert Document.objects.filter(case=case).count() == 4


@override_settings(RAG_TENANT_MAX_DOCUMENTS=3)
def test_attachments_count_against_the_tenants_quota_and_none_is_stored(case, upload):
    """The e-mail fits; its three attachments would not: it fails, all or none, before embedding."""
    result = upload(case, "mail.eml", content=_email_with_attachments())
    email = _get(case, result.document.pk)
    assert (email.status, email.error_type, email.chunk_count) == ("failed", "QuotaExceeded", 0)
    assert "3 more would pass its limit of 3 documents" in email.error_message
    assert list(Document.objects.filter(case=case)) == [email]
    assert [path.name for path in stored_files()] == [Path(email.file.name).name]


def test_a_failed_attachment_is_stored_then_rolled_back_with_its_email(case, committed, monkeypatch):
    """A failure while the worker stores the attachments (here the second) leaves no attachment
    row or file, and the e-mail failed without passages."""
    real = service.document_upload
    calls = []

    def failing(**kwargs):
        calls.append(kwargs["filename"])
        if len(calls) == 3:
            raise OSError("disk full")
        return real(**kwargs)

    monkeypatch.setattr(service, "document_upload", failing)
    with pytest.raises(OSError, match="disk full"), committed():
        service.documents_upload(
            tenant=case.tenant, case=case, files=[SimpleUploadedFile("mail.eml", _email_with_attachments())]
        )
    assert calls == ["mail.eml", "contract.pdf", "notes.txt"]
    (email,) = Document.objects.filter(case=case)
    assert (email.status, email.error_type, email.chunk_count) == ("failed", "InternalError", 0)
    assert not Chunk.objects.filter(document=email).exists()
    assert [path.name for path in stored_files()] == [Path(email.file.name).name]


def test_deleting_the_email_keeps_its_attachments_as_documents(case, upload):
    result = upload(case, "mail.eml", content=_email_with_attachments())
    forwarded = _family(case, result.document.pk)[3]
    service.document_delete(tenant=case.tenant, document_id=result.document.pk)
    remaining = Document.objects.filter(case=case)
    assert remaining.count() == 4
    assert set(remaining.values_list("parent_id", flat=True)) == {None, forwarded.pk}


def test_an_emails_confidentiality_and_readers_reach_its_attachments(case, upload):
    result = upload(case, "mail.eml", content=_email_with_attachments())
    documents = [d.pk for d in _family(case, result.document.pk)]
    email = _get(case, documents[0])
    reader = MembershipFactory(tenant=case.tenant, role=Role.MEMBER).user

    email.sensitivity = "confidential"
    email.save()
    every = Document.objects.filter(pk__in=documents)
    assert set(every.values_list("sensitivity", flat=True)) == {"confidential"}
    # Search filters on the chunks' copy of the field: the attachments' passages are hidden too.
    chunks = Chunk.objects.filter(document_id__in=documents).values_list("sensitivity", flat=True)
    assert set(chunks) == {"confidential"}

    email.confidential_readers.add(reader)  # down to the forwarded e-mail's own attachment
    assert all(reader in d.confidential_readers.all() for d in every)
    email.confidential_readers.remove(reader)
    assert not any(d.confidential_readers.exists() for d in every)

    # Making the e-mail internal again is a decision about the e-mail only.
    email.sensitivity = "internal"
    email.save()
    assert list(every.exclude(pk=email.pk).values_list("sensitivity", flat=True)) == ["confidential"] * 4


def test_ingest_now_ingests_the_attachments_too(case):
    outcome = service.ingest_now(
        tenant=case.tenant, case=case, filename="mail.eml", content=_email_with_attachments()
    )
    assert outcome.status == "ok"
    statuses = set(Document.objects.filter(case=case).values_list("status", flat=True))
    assert statuses == {DocumentStatus.READY}
    assert Document.objects.filter(case=case).count() == 5


# --- REST API and staff UI -------------------------------------------------------------------------


def _post_email(client, case, committed):
    """Upload the e-mail with attachments through the API, its ingestion run after the reply."""
    with committed():
        return client.post(
            f"{CASES}/{case.pk}/documents",
            {"files": [SimpleUploadedFile("mail.eml", _email_with_attachments())]},
            format="multipart",
        )


def test_upload_through_the_api_returns_the_email_and_its_attachments(case, member_client, committed):
    response = _post_email(member_client, case, committed)
    assert response.status_code == 201, response.json()
    (uploaded,) = response.json()["documents"]  # the e-mail; its job stored the attachments
    assert uploaded["mime_type"] == "message/rfc822" and uploaded["attachment_ids"] == []
    assert uploaded["attachments"] == "pending"  # the reply says they come later, in the background
    family = [d.pk for d in _family(case, uploaded["id"])]
    documents = [member_client.get(f"{DOCUMENTS}/{document_id}").json() for document_id in family]
    email, pdf, notes, forwarded, terms = documents
    parents = [d["parent_id"] for d in documents]
    assert parents == [None, email["id"], email["id"], email["id"], forwarded["id"]]
    assert email["attachment_ids"] == [pdf["id"], notes["id"], forwarded["id"]]
    assert forwarded["attachment_ids"] == [terms["id"]] and pdf["attachment_ids"] == []
    assert email["mime_type"] == "message/rfc822" and email["document_date"] == "2025-03-04"
    # E-mails say their attachments were extracted; other documents have none to extract.
    assert [d["attachments"] for d in documents] == ["extracted", None, None, "extracted", None]

    detail = member_client.get(f"{DOCUMENTS}/{email['id']}").json()
    assert (detail["status"], detail["attachment_ids"]) == ("ready", email["attachment_ids"])
    assert member_client.get(f"{DOCUMENTS}/{notes['id']}").json()["parent_id"] == email["id"]
    for listing in (f"{CASES}/{case.pk}/documents", f"{DOCUMENTS}?case_id={case.pk}"):
        by_id = {d["id"]: d for d in member_client.get(listing).json()["results"]}
        assert set(by_id) == set(family)
        assert by_id[email["id"]]["attachment_ids"] == email["attachment_ids"]
        assert by_id[email["id"]]["attachments"] == "extracted"
        assert by_id[terms["id"]]["parent_id"] == forwarded["id"]


@override_settings(RAG_TENANT_MAX_DOCUMENTS=3)
def test_an_email_that_fails_before_its_attachments_are_split_says_so(case, member_client, committed):
    response = _post_email(member_client, case, committed)
    (uploaded,) = response.json()["documents"]
    assert uploaded["attachments"] == "pending"
    email = member_client.get(f"{DOCUMENTS}/{uploaded['id']}").json()
    assert (email["status"], email["error_type"]) == ("failed", "QuotaExceeded")
    assert (email["attachments"], email["attachment_ids"]) == ("failed", [])


def test_a_text_upload_has_no_attachments_to_extract(case, member_client):
    response = member_client.post(
        f"{CASES}/{case.pk}/documents",
        {"files": [SimpleUploadedFile("note.txt", NOTE)]},
        format="multipart",
    )
    (uploaded,) = response.json()["documents"]
    assert (uploaded["attachments"], uploaded["attachment_ids"]) == (None, [])


def test_another_tenant_finds_neither_the_email_nor_its_attachments(case, upload, other_admin_client):
    result = upload(case, "mail.eml", content=_email_with_attachments())
    for each in _family(case, result.document.pk):
        assert other_admin_client.get(f"{DOCUMENTS}/{each.pk}").status_code == 404
    assert other_admin_client.get(DOCUMENTS).json()["count"] == 0


def test_an_outlook_msg_upload_is_415_naming_eml(case, member_client):
    ole = bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504) + "__substg1.0_0037001F".encode("utf-16-le")
    response = member_client.post(
        f"{CASES}/{case.pk}/documents", {"files": [SimpleUploadedFile("mail.msg", ole)]}, format="multipart"
    )
    assert response.status_code == 415
    body = response.json()
    assert body["error_type"] == "UnsupportedMediaType" and ".eml" in body["message"]
    assert body["details"]["files"][0]["details"] == {"detected": "msg"}


def test_the_document_page_shows_the_email_and_its_attachments(case, upload):
    member_browser = Client()
    member_browser.force_login(MembershipFactory(tenant=case.tenant).user)
    result = upload(case, "mail.eml", content=_email_with_attachments())
    email, pdf = _family(case, result.document.pk)[:2]
    page = member_browser.get(f"/documents/{email.pk}/").content.decode()
    assert "Attachments" in page and f'href="/documents/{pdf.pk}/"' in page
    page = member_browser.get(f"/documents/{pdf.pk}/").content.decode()
    assert "Attached to" in page and f'href="/documents/{email.pk}/"' in page
    assert "Draft share purchase agreement" in page


def test_the_page_of_an_email_not_yet_indexed_says_its_attachments_come_later(case, queued_document):
    member_browser = Client()
    member_browser.force_login(MembershipFactory(tenant=case.tenant).user)
    email = queued_document(case, "mail.eml", _email_with_attachments())
    page = member_browser.get(f"/documents/{email.pk}/").content.decode()
    assert "become documents of their own once this e-mail is indexed" in page
    note = queued_document(case, "note.txt", NOTE)
    assert "Attachments" not in member_browser.get(f"/documents/{note.pk}/").content.decode()


@pytest.mark.integration
@pytest.mark.slow
def test_an_email_and_its_attachment_are_ingested_by_a_real_worker(celery_worker, tenant, make_key_client):
    from rag import services as rag_services

    case = rag_services.case_create(tenant=tenant, name="Worker e-mail matter")
    client = make_key_client(tenant, Role.MEMBER)
    msg = message()
    attach(msg, "notes.txt", NOTE, "text/plain")
    response = client.post(
        f"{CASES}/{case.pk}/documents", {"files": [SimpleUploadedFile("mail", eml(msg))]}, format="multipart"
    )
    assert response.status_code == 201
    ids = [document["id"] for document in response.json()["documents"]]
    assert len(ids) == 1  # the e-mail; the worker parses it and stores the attachment
    (uploaded,) = response.json()["documents"]
    assert (uploaded["attachments"], uploaded["attachment_ids"]) == ("pending", [])

    deadline, bodies = time.monotonic() + 180, []
    while time.monotonic() < deadline:
        ids = ids[:1] + client.get(f"{DOCUMENTS}/{ids[0]}").json()["attachment_ids"]
        bodies = [client.get(f"{DOCUMENTS}/{document_id}").json() for document_id in ids]
        if len(ids) == 2 and all(body["status"] in ("ready", "failed") for body in bodies):
            break
        time.sleep(0.25)
    assert [body["status"] for body in bodies] == ["ready", "ready"], bodies
    assert bodies[0]["attachment_ids"] == [ids[1]] and bodies[1]["parent_id"] == ids[0]
    assert [body["attachments"] for body in bodies] == ["extracted", None]
    listed = {d["id"]: d for d in client.get(f"{CASES}/{case.pk}/documents").json()["results"]}
    assert (listed[ids[0]]["attachments"], listed[ids[0]]["attachment_ids"]) == ("extracted", [ids[1]])
    assert listed[ids[1]]["parent_id"] == ids[0]
