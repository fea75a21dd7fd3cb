"""Django admin: cases. A case keeps its tenant (its documents belong to it). Deleting one (alone
or by the bulk action) goes through the service: the tenant's index version is bumped and the
documents' stored files are deleted."""

from __future__ import annotations

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from rag import selectors
from rag.models import Case, Chunk, Document

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(case, upload):
    """The case with one indexed document; returns (document, its stored file's name)."""
    document = upload(case, "contract.txt").document
    document.refresh_from_db()
    assert default_storage.exists(document.file.name)
    return document, document.file.name


def test_deleting_a_case_bumps_the_index_version_and_deletes_its_files(admin_client, case, stored, committed):
    document, name = stored
    version = selectors.index_version_get(tenant=case.tenant)
    with committed():
        response = admin_client.post(reverse("admin:rag_case_delete", args=[case.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert (
        not Case.objects.filter(pk=case.pk).exists() and not Chunk.objects.filter(document=document).exists()
    )
    assert selectors.index_version_get(tenant=case.tenant) > version
    assert not default_storage.exists(name)


def test_the_bulk_delete_of_cases_goes_through_the_service(
    admin_client, case, other_case, stored, upload, committed
):
    _document, name = stored
    theirs = upload(other_case, "contract.pdf").document
    versions = {t: selectors.index_version_get(tenant=t) for t in (case.tenant, other_case.tenant)}
    with committed():
        response = admin_client.post(
            reverse("admin:rag_case_changelist"),
            {"action": "delete_selected", "_selected_action": [case.pk, other_case.pk], "post": "yes"},
        )
    assert response.status_code == 302
    assert not Case.objects.exists() and not Document.objects.exists()
    for tenant, version in versions.items():
        assert selectors.index_version_get(tenant=tenant) > version
    assert not default_storage.exists(name) and not default_storage.exists(theirs.file.name)


def test_a_case_keeps_its_tenant(admin_client, case, other_tenant, stored):
    url = reverse("admin:rag_case_change", args=[case.pk])
    page = admin_client.get(url)
    assert page.status_code == 200 and "tenant" not in page.context["adminform"].form.fields
    response = admin_client.post(
        url, {"name": "Renamed", "client": "", "description": "", "tenant": other_tenant.pk}
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    case.refresh_from_db()
    assert (case.name, case.tenant_id) == ("Renamed", stored[0].tenant_id)
    assert "tenant" in admin_client.get(reverse("admin:rag_case_add")).context["adminform"].form.fields
