"""Fixtures for ingestion: cases, fixture files, an upload helper and an embedding call counter."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag import services as rag_services
from rag.ingest import embedding, service

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def case(tenant):
    return rag_services.case_create(tenant=tenant, name="Acme v. Globex", client="Acme Corp")


@pytest.fixture
def other_case(other_tenant):
    return rag_services.case_create(tenant=other_tenant, name="Globex matter")


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """`with committed():` runs the on-commit hooks (task enqueues) that the test transaction
    would otherwise swallow; tasks run eagerly under test settings."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def upload(committed):
    """upload(case, fixture_name, **fields) -> UploadResult, with its ingestion job already run."""

    def _upload(case, name: str, *, content: bytes | None = None, filename: str | None = None, **fields):
        with committed():
            return service.document_upload(
                tenant=case.tenant,
                case=case,
                filename=filename or name,
                content=fixture_bytes(name) if content is None else content,
                fields=service.DocumentFields(**fields),
            )

    return _upload


@pytest.fixture
def embedded_texts(monkeypatch):
    """A list that records every text actually sent to the real embedding model."""
    seen: list[str] = []
    real_embed = embedding.embed

    def recording_embed(texts, **kwargs):
        seen.extend(texts)
        return real_embed(texts, **kwargs)

    monkeypatch.setattr(embedding, "embed", recording_embed)
    return seen


@pytest.fixture(scope="session")
def zip_bomb_docx() -> bytes:
    """A DOCX-shaped zip whose document.xml inflates ~1000x (20 MB from a few KB)."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        body = "<w:p><w:r><w:t>a</w:t></w:r></w:p>" * (20 * 1024 * 1024 // 34)
        archive.writestr(
            "word/document.xml", f'<?xml version="1.0"?><w:document><w:body>{body}</w:body></w:document>'
        )
    return buffer.getvalue()
