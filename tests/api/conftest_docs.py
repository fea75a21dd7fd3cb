"""Fixtures of the case and document API tests (imported explicitly by their modules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from rag.ingest import service
from tests.rag.conftest import fixture_bytes

# Fixtures, for `from tests.api.conftest_docs import *` in the test modules; the cases, clients and
# `committed` they use come from tests/api/conftest.py.
__all__ = ["ingested_document", "queued_document"]

CASES = "/api/v1/rag/cases"
DOCUMENTS = "/api/v1/rag/documents"


def stored_files() -> list[Path]:
    """Every file under MEDIA_ROOT."""
    root = Path(settings.MEDIA_ROOT)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def upload_file(name: str, content: bytes | None = None) -> SimpleUploadedFile:
    """A multipart file: a fixture file's bytes under its name, or `content` under `name`."""
    return SimpleUploadedFile(name, fixture_bytes(name) if content is None else content)


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
