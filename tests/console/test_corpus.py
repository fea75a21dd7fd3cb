"""Cases and documents on the firm admin console: ingestion state and errors in the list, reindex
and delete through the ingestion services, metadata edits through `document_update`, no upload
form, and nothing of another firm reachable (its ids are 404, its cases not offered)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from rag import selectors
from rag.ingest import service
from rag.models import Case, Chunk, Document, DocumentStatus, TitleSource
from rag.services import case_create
from tests.rag.conftest import case, committed, other_case, upload  # noqa: F401  (fixtures)

from .conftest import make_document

pytestmark = pytest.mark.django_db
CASES = "/manage/rag/case/"
DOCUMENTS = "/manage/rag/document/"


@pytest.fixture
def ready(case, upload):  # noqa: F811
    """An ingested document of the firm (ready, with passages)."""
    document = upload(case, "contract.txt", title="Supply contract").document
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY and document.chunk_count > 0
    return document


@pytest.fixture
def other_ready(other_case, upload):  # noqa: F811
    document = upload(other_case, "contract.txt", title="Globex contract").document
    document.refresh_from_db()
    return document


def _change_data(document, **changes) -> dict:
    """The change form's fields as they stand, with `changes` applied."""
    data = {
        "title": document.title,
        "case": document.case_id,
        "source_type": document.source_type,
        "doc_type": document.doc_type,
        "jurisdiction": document.jurisdiction,
        "document_date": document.document_date or "",
        "sensitivity": document.sensitivity,
        "metadata": "{}",
    }
    return {**data, **changes}


def _listed(response) -> list[int]:
    return [row.pk for row in response.context["cl"].result_list]


# --- The list -----------------------------------------------------------------------------------


def test_list_shows_status_progress_and_the_error(console, tenant, ready):
    processing = make_document(tenant, "inflight")
    Document.objects.filter(pk=processing.pk).update(
        status=DocumentStatus.PROCESSING, stage="embedding 3/12", progress=40
    )
    failed = make_document(tenant, "broken")
    service.document_fail(failed, "EncryptedDocument", "The PDF is encrypted; upload it without a password.")

    page = console.get(DOCUMENTS).content.decode()
    assert "Processing — embedding 3/12 (40%)" in page
    assert "EncryptedDocument: The PDF is encrypted; upload it without a password." in page
    assert "Ready" in page and "Supply contract" in page
    assert _listed(console.get(DOCUMENTS, {"attention": "failed"})) == [failed.pk]
    assert _listed(console.get(DOCUMENTS, {"status": "failed"})) == [failed.pk]
    assert _listed(console.get(DOCUMENTS, {"attention": "pending"})) == [processing.pk]
    assert _listed(console.get(DOCUMENTS, {"q": "supply"})) == [ready.pk]


def test_a_long_error_is_cut_in_the_list_and_whole_on_the_document_page(console, tenant):
    failed = make_document(tenant, "longerror")
    message = "The extractor gave up on page 7 " + "because the content stream is malformed " * 5
    service.document_fail(failed, "CorruptDocument", message)
    assert message.strip() not in console.get(DOCUMENTS).content.decode()
    detail = console.get(f"{DOCUMENTS}{failed.pk}/change/").content.decode()
    assert f"CorruptDocument: {message.strip()}" in detail


def test_the_case_filter_offers_only_the_firms_cases(console, tenant, ready, other_ready):
    second = make_document(tenant, "second")
    page = console.get(DOCUMENTS)
    (case_filter,) = [spec for spec in page.context["cl"].filter_specs if spec.title == "case"]
    assert sorted(pk for pk, _ in case_filter.lookup_choices) == sorted([ready.case_id, second.case_id])
    assert other_ready.case.name not in page.content.decode()


def test_no_add_form_but_a_link_to_the_staff_ui_upload_page(console, ready):
    assert console.get(DOCUMENTS + "add/").status_code == 403
    page = console.get(DOCUMENTS).content.decode()
    assert DOCUMENTS + "add/" not in page and 'href="/cases/"' in page
    filtered = console.get(DOCUMENTS, {"case__id__exact": ready.case_id}).content.decode()
    assert f'href="/cases/{ready.case_id}/"' in filtered
    assert '"/admin/' not in page


def test_the_document_page_shows_state_read_only_and_never_the_text(console, ready):
    response = console.get(f"{DOCUMENTS}{ready.pk}/change/")
    form = response.context["adminform"].form
    assert set(form.fields) == {"title", "case", "source_type", "doc_type", "jurisdiction"} | {
        "document_date",
        "sensitivity",
        "metadata",
    }
    page = response.content.decode()
    assert ready.sha256 in page and "Ready" in page
    assert '"/admin/' not in page  # links stay on this site
    assert ready.text[:60] not in page


# --- Reindex ------------------------------------------------------------------------------------


def test_reindex_requeues_the_document_and_it_is_indexed_again(
    console, ready, django_capture_on_commit_callbacks
):
    indexed_at = ready.indexed_at
    with django_capture_on_commit_callbacks() as callbacks:
        response = console.post(DOCUMENTS, {"action": "reindex", "_selected_action": [ready.pk]}, follow=True)
    assert "Queued 1 document for reindexing." in response.content.decode()
    ready.refresh_from_db()
    assert (ready.status, ready.stage, ready.progress) == (DocumentStatus.QUEUED, "queued", 0)
    assert len(callbacks) == 1
    callbacks[0]()  # the enqueue the commit would run; tasks run eagerly under test settings
    ready.refresh_from_db()
    assert ready.status == DocumentStatus.READY and ready.indexed_at > indexed_at


def test_case_reindex_queues_every_document_of_the_case(console, tenant, ready):
    second = make_document(tenant, "second")
    Document.objects.filter(pk=second.pk).update(case=ready.case)
    response = console.post(CASES, {"action": "reindex", "_selected_action": [ready.case_id]}, follow=True)
    assert "Queued 2 documents for reindexing." in response.content.decode()
    statuses = set(Document.objects.filter(case=ready.case).values_list("status", flat=True))
    assert statuses == {DocumentStatus.QUEUED}


def test_a_full_ingest_queue_is_a_warning_not_an_error(console, settings, tenant, ready):
    settings.RAG_TENANT_MAX_CONCURRENT_INGESTS = 1
    make_document(tenant, "occupying")  # queued: the firm's one ingest slot is taken
    response = console.post(DOCUMENTS, {"action": "reindex", "_selected_action": [ready.pk]}, follow=True)
    page = response.content.decode()
    assert response.status_code == 200 and "Queued 0 documents for reindexing." in page
    assert "Supply contract: " in page
    ready.refresh_from_db()
    assert ready.status == DocumentStatus.READY


# --- Delete -------------------------------------------------------------------------------------


def test_delete_removes_the_document_its_passages_and_file(console, tenant, ready, committed):  # noqa: F811
    file_name = ready.file.name
    version = selectors.index_version_get(tenant=tenant)
    confirm = console.get(f"{DOCUMENTS}{ready.pk}/delete/").content.decode()
    assert ready.chunk_count == 1
    assert "Supply contract: with 1 passage and its stored file" in confirm
    with committed():
        response = console.post(f"{DOCUMENTS}{ready.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Document.objects.filter(pk=ready.pk).exists()
    assert not Chunk.objects.filter(document_id=ready.pk).exists()
    assert not default_storage.exists(file_name)
    assert selectors.index_version_get(tenant=tenant) == version + 1


def test_case_delete_says_how_many_documents_go_and_removes_them(console, ready, committed):  # noqa: F811
    confirm = console.get(f"{CASES}{ready.case_id}/delete/").content.decode()
    assert "Acme v. Globex: with 1 document, their passages and stored files" in confirm
    with committed():
        assert console.post(f"{CASES}{ready.case_id}/delete/", {"post": "yes"}).status_code == 302
    assert not Case.objects.filter(pk=ready.case_id).exists()
    assert not Chunk.objects.filter(document_id=ready.pk).exists()
    assert not Path(default_storage.path(ready.file.name)).exists()


def test_bulk_delete_goes_through_the_service(console, tenant, ready, committed):  # noqa: F811
    other = make_document(tenant, "bulk")
    with committed():
        console.post(
            DOCUMENTS, {"action": "delete_selected", "_selected_action": [ready.pk, other.pk], "post": "yes"}
        )
    assert not Document.objects.filter(pk__in=[ready.pk, other.pk]).exists()
    assert not default_storage.exists(ready.file.name) and not default_storage.exists(other.file.name)


# --- Edit ---------------------------------------------------------------------------------------


def test_editing_sensitivity_reaches_the_passages_and_invalidates_cached_answers(console, tenant, ready):
    version = selectors.index_version_get(tenant=tenant)
    url = f"{DOCUMENTS}{ready.pk}/change/"
    response = console.post(url, _change_data(ready, sensitivity="confidential", title="Supply MSA"))
    assert response.status_code == 302, response.context["adminform"].form.errors
    ready.refresh_from_db()
    assert (ready.sensitivity, ready.title, ready.title_source) == (
        "confidential",
        "Supply MSA",
        TitleSource.USER,
    )
    assert set(Chunk.objects.filter(document=ready).values_list("sensitivity", flat=True)) == {"confidential"}
    assert selectors.index_version_get(tenant=tenant) > version


def test_an_unchanged_form_changes_nothing(console, tenant, ready):
    version = selectors.index_version_get(tenant=tenant)
    response = console.post(f"{DOCUMENTS}{ready.pk}/change/", _change_data(ready))
    assert response.status_code == 302
    assert selectors.index_version_get(tenant=tenant) == version


def test_moving_a_document_to_another_case_moves_its_passages(console, tenant, ready):
    target = case_create(tenant=tenant, name="Acme appeal")
    response = console.post(f"{DOCUMENTS}{ready.pk}/change/", _change_data(ready, case=target.pk))
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert set(Chunk.objects.filter(document=ready).values_list("case_id", flat=True)) == {target.pk}


def test_a_forged_case_of_another_firm_is_refused(console, ready, other_case):  # noqa: F811
    response = console.post(f"{DOCUMENTS}{ready.pk}/change/", _change_data(ready, case=other_case.pk))
    assert response.status_code == 200
    assert "case" in response.context["adminform"].form.errors
    ready.refresh_from_db()
    assert ready.case_id != other_case.pk


def test_bad_metadata_is_a_form_error_and_changes_nothing(console, ready):
    response = console.post(f"{DOCUMENTS}{ready.pk}/change/", _change_data(ready, metadata="{not json"))
    assert response.status_code == 200 and "metadata" in response.context["adminform"].form.errors
    ready.refresh_from_db()
    assert ready.metadata == {}


# --- Cases --------------------------------------------------------------------------------------


def test_case_add_and_change_go_through_the_services(console, tenant, firm_admin, ready):
    assert console.post(CASES + "add/", {"name": "New matter", "client": "Initech"}).status_code == 302
    created = Case.objects.get(tenant=tenant, name="New matter")
    assert created.created_by == firm_admin
    taken = console.post(f"{CASES}{created.pk}/change/", {"name": ready.case.name, "client": ""})
    assert "Your firm already has a case with this name." in taken.content.decode()
    assert console.post(f"{CASES}{created.pk}/change/", {"name": "Renamed", "client": "X"}).status_code == 302
    created.refresh_from_db()
    assert (created.name, created.client) == ("Renamed", "X")


def test_case_list_counts_documents(console, ready):
    page = console.get(CASES)
    (row,) = page.context["cl"].result_list
    assert row.document_count == 1
    assert f"{DOCUMENTS}?case__id__exact={ready.case_id}" in page.content.decode()


# --- Isolation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("view", ["change", "delete", "history"])
def test_another_firms_case_and_document_are_404(console, other_ready, view):
    assert console.get(f"{DOCUMENTS}{other_ready.pk}/{view}/").status_code == 404
    assert console.get(f"{CASES}{other_ready.case_id}/{view}/").status_code == 404
    assert console.post(f"{DOCUMENTS}{other_ready.pk}/{view}/", {"post": "yes"}).status_code == 404


def test_the_case_autocomplete_lists_only_the_firms_cases(console, ready, other_ready):
    params = {"app_label": "rag", "model_name": "document", "field_name": "case"}
    response = console.get("/manage/autocomplete/", params)
    assert response.status_code == 200
    assert [int(result["id"]) for result in response.json()["results"]] == [ready.case_id]
    assert console.get("/manage/autocomplete/", {**params, "term": "Globex matter"}).json()["results"] == []


def test_actions_on_a_forged_selection_cannot_reach_another_firm(console, ready, other_ready, committed):  # noqa: F811
    with committed():
        for action in ("reindex", "delete_selected"):
            console.post(DOCUMENTS, {"action": action, "_selected_action": [other_ready.pk], "post": "yes"})
        console.post(CASES, {"action": "reindex", "_selected_action": [other_ready.case_id]})
        console.post(
            CASES, {"action": "delete_selected", "_selected_action": [other_ready.case_id], "post": "yes"}
        )
    other_ready.refresh_from_db()
    assert other_ready.status == DocumentStatus.READY
    assert default_storage.exists(other_ready.file.name)
    assert Chunk.objects.filter(document=other_ready).count() == other_ready.chunk_count > 0
