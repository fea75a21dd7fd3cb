"""Management commands: demo_setup (idempotent, working credentials, demo documents) and db status."""

import json
import re
import shutil
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from rag.ingest import service
from rag.models import Case, Chunk, Document, DocumentStatus
from ragsite import demo
from tenants.models import ApiKey, Membership, Role, Tenant
from tests.rag.conftest import FIXTURES
from tests.scans import BLANK_SCAN_REASON


def _demo(settings, tmp_path, *, documents: bool = False) -> str:
    settings.VAR_DIR = tmp_path
    settings.MEDIA_ROOT = tmp_path / "media"
    out = StringIO()
    call_command("demo_setup", *([] if documents else ["--no-documents"]), stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_demo_setup_prints_working_credentials_and_is_idempotent(settings, tmp_path):
    first = _demo(settings, tmp_path)
    password = re.search(r"password: (\S+)", first).group(1)
    api_key = re.search(r"API key\s+(\S+)", first).group(1)
    assert "http://127.0.0.1:8000/admin/" in first

    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password)
    tenant = Tenant.objects.get(slug="demo-law-firm")
    assert Membership.objects.get(tenant=tenant, user=admin).role == Role.OWNER
    assert "http://127.0.0.1:8000/manage/" in first  # the owner's firm console, with the same login
    console = Client()
    assert console.login(username="admin", password=password)
    assert console.get("/manage/").status_code == 200
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key}")
    assert client.get("/api/v1/tenants/current").json()["tenant"]["slug"] == "demo-law-firm"

    second = _demo(settings, tmp_path)
    assert re.search(r"password: (\S+)", second).group(1) == password
    assert re.search(r"API key\s+(\S+)", second).group(1) == api_key
    assert Tenant.objects.filter(slug="demo-law-firm").count() == 1
    assert ApiKey.objects.filter(tenant=tenant, revoked_at=None).count() == 1
    saved = json.loads((tmp_path / "demo-credentials.json").read_text())
    assert saved == {"password": password, "api_key": api_key}
    assert (tmp_path / "demo-credentials.json").stat().st_mode & 0o077 == 0


@pytest.mark.django_db
def test_demo_setup_replaces_a_revoked_key(settings, tmp_path):
    old_key = re.search(r"API key\s+(\S+)", _demo(settings, tmp_path)).group(1)
    ApiKey.objects.update(revoked_at="2026-01-01T00:00Z")
    new_key = re.search(r"API key\s+(\S+)", _demo(settings, tmp_path)).group(1)
    assert new_key != old_key


@pytest.mark.slow
@pytest.mark.django_db
def test_demo_setup_loads_the_demo_documents_once(settings, tmp_path):
    first = _demo(settings, tmp_path, documents=True)

    tenant = Tenant.objects.get(slug="demo-law-firm")
    case = Case.objects.get(tenant=tenant, name=demo.DEMO_CASE)
    documents = {d.original_filename: d for d in Document.objects.for_tenant(tenant).filter(case=case)}
    expected = [item.path.name for item in demo.demo_documents()]
    assert sorted(documents) == sorted(expected) and len(expected) == 5
    for name, document in documents.items():
        assert document.status == DocumentStatus.READY, (name, document.error_message)
        assert document.chunk_count == Chunk.objects.filter(document=document).count() > 0
        assert f"ingested {name}: {document.page_count} page" in first
    assert {d.mime_type.rsplit("/", 1)[-1] for d in documents.values()} >= {"pdf", "plain"}
    assert documents["maintenance-agreement.pdf"].page_count > 1
    assert documents["co-branding-agreement.docx"].mime_type.endswith("wordprocessingml.document")
    # The manifest's fields travel with the documents.
    cobranding = documents["co-branding-agreement.docx"]
    assert (cobranding.sensitivity, cobranding.doc_type, cobranding.jurisdiction) == (
        "confidential",
        "contract",
        "Tennessee",
    )
    assert cobranding.title == "Co-Branding Agreement — Integrity Media"
    assert cobranding.metadata["parties"] == ["Integrity Incorporated", "Time Life, Inc."]
    assert str(cobranding.document_date) == "2000-01-10"
    assert documents["distributor-agreement.txt"].document_date is None
    assert "Demo documents: 5 ingested" in first and "0 failed" in first
    assert "API key" in first.split("Demo documents:", 1)[1]  # the credentials still come last

    second = _demo(settings, tmp_path, documents=True)
    assert Document.objects.for_tenant(tenant).count() == 5
    assert Case.objects.filter(tenant=tenant, name=demo.DEMO_CASE).count() == 1
    assert "Demo documents: 0 ingested (0 passages), 5 already loaded, 0 failed" in second
    assert "already loaded maintenance-agreement.pdf" in second


@pytest.mark.django_db
def test_demo_setup_no_documents_loads_none(settings, tmp_path):
    out = _demo(settings, tmp_path)
    assert "Demo documents" not in out and "API key" in out
    assert not Document.objects.exists()
    assert not Case.objects.filter(name=demo.DEMO_CASE).exists()


@pytest.mark.slow
@pytest.mark.django_db
def test_a_failing_demo_document_is_reported_and_the_rest_still_load(settings, tmp_path, monkeypatch):
    folder = tmp_path / "demo"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "empty.txt").write_bytes(b"")
    shutil.copy(FIXTURES / "scanned.pdf", folder / "documents" / "scanned.pdf")
    (folder / "documents" / "crash.txt").write_text("This agreement is governed by the laws of Texas.")
    shutil.copy(FIXTURES / "contract.txt", folder / "documents" / "contract.txt")
    entry = {
        "title": "",
        "doc_type": "contract",
        "source_type": "user_upload",
        "jurisdiction": "",
        "document_date": None,
        "sensitivity": "internal",
        "metadata": {},
    }
    names = ["empty.txt", "scanned.pdf", "crash.txt", "contract.txt"]
    manifest = {"documents": [{**entry, "file": name} for name in names]}
    (folder / "documents.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(demo, "DEMO_DIR", folder)
    real_ingest = service._ingest

    def crash_on_one(document, **options):
        if document.original_filename == "crash.txt":
            raise RuntimeError("an unexpected bug")
        return real_ingest(document, **options)

    monkeypatch.setattr(service, "_ingest", crash_on_one)

    out = _demo(settings, tmp_path, documents=True)

    assert "failed empty.txt: empty.txt is empty." in out
    assert f"failed scanned.pdf: {BLANK_SCAN_REASON}" in out
    assert "failed crash.txt: Ingestion failed unexpectedly." in out
    assert "ingested contract.txt: 1 page, " in out
    assert "Demo documents: 1 ingested" in out and "3 failed" in out
    statuses = dict(Document.objects.values_list("original_filename", "status"))
    assert statuses == {"scanned.pdf": "failed", "crash.txt": "failed", "contract.txt": "ready"}


def test_db_status_reports_the_running_embedded_server(settings, db):
    if settings.DATABASE_URL:
        pytest.skip("DATABASE_URL is set: no embedded server")
    out = StringIO()
    call_command("db", "status", stdout=out)
    assert out.getvalue().startswith("running (pid ")
