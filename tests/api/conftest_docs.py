"""Fixtures of the case and document API tests (imported explicitly by their modules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from rag import services as rag_services
from rag.ingest import service
from tenants.models import Role
from tests.rag.conftest import fixture_bytes

__all__ = [  # fixtures, for `from tests.api.conftest_docs import *` in the test modules
    "_media_in_tmp",
    "case",
    "committed",
    "ingested_document",
    "member_client",
    "other_case",
    "queued_document",
    "viewer_client",
]

CASES = "/api/v1/rag/cases"
DOCUMENTS = "/api/v1/rag/documents"


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def stored_files() -> list[Path]:
    """Every file under MEDIA_ROOT."""
    root = Path(settings.MEDIA_ROOT)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def upload_file(name: str, content: bytes | None = None) -> SimpleUploadedFile:
    """A multipart file: a fixture file's bytes under its name, or `content` under `name`."""
    return SimpleUploadedFile(name, fixture_bytes(name) if content is None else content)


@pytest.fixture
def case(tenant):
    return rag_services.case_create(tenant=tenant, name="Acme v. Globex", client="Acme Corp")


@pytest.fixture
def other_case(other_tenant):
    return rag_services.case_create(tenant=other_tenant, name="Globex matter")


@pytest.fixture
def member_client(tenant, make_key_client):
    return make_key_client(tenant, Role.MEMBER)


@pytest.fixture
def viewer_client(tenant, make_key_client):
    return make_key_client(tenant, Role.VIEWER)


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """`with committed():` runs the on-commit hooks (ingestion, file deletion) that the test
    transaction would otherwise swallow; tasks run eagerly under test settings."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def queued_document():
    """queued_document(case, filename, content, **fields): a stored, not ingested document."""

    def make(case, filename="note.txt", content=None, **fields):
        content = content if content is not None else f"Text of {filename} in {case.name}.".encode()
        return service.document_upload(
            tenant=case.tenant,
            case=case,
            filename=filename,
            content=content,
            fields=service.DocumentFields(**fields),
            enqueue=False,
        ).document

    return make


@pytest.fixture
def ingested_document(committed):
    """ingested_document(case, fixture_name): uploaded and ingested (ready, with chunks)."""

    def make(case, name="contract.txt"):
        with committed():
            result = service.document_upload(
                tenant=case.tenant, case=case, filename=name, content=fixture_bytes(name)
            )
        result.document.refresh_from_db()
        return result.document

    return make
