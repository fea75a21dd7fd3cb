"""Fixtures for the admin API tests. Not a conftest.py: the modules that need them import them
(`from tests.api.conftest_admin import ...`), so they stay out of the other API tests' way."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from rag import services as rag_services
from rag.ingest import service as ingest_service
from rag.models import AuditLog, Document, DocumentStatus
from tenants.models import Role
from tests.factories import MembershipFactory

ROLES_BELOW_ADMIN = [Role.VIEWER, Role.MEMBER]


@pytest.fixture
def session_admin(tenant):
    """(client, user): a logged-in admin of `tenant` (a session, so writes name the user)."""
    user = MembershipFactory(tenant=tenant, role=Role.ADMIN).user
    client = APIClient()
    client.force_login(user)
    return client, user


@pytest.fixture
def ingest_for_tenant(settings, tmp_path):
    """ingest_for_tenant(tenant, text, title=..., **fields) -> Document: a one-file TXT upload (fields as
    rag.ingest.service.DocumentFields), fully indexed with the real embedding model."""
    settings.MEDIA_ROOT = tmp_path / "media"

    def ingest(tenant, text: str, *, title: str, filename: str = "note.txt", **fields) -> Document:
        case = rag_services.case_get_or_create(tenant=tenant, name="Admin API tests")
        uploaded = ingest_service.document_upload(
            tenant=tenant,
            case=case,
            filename=filename,
            content=text.encode(),
            fields=ingest_service.DocumentFields(title=title, **fields),
            enqueue=False,
        )
        document = ingest_service.document_ingest(tenant=tenant, document_id=uploaded.document.pk)
        assert document.status == DocumentStatus.READY, document.error_message
        return document

    return ingest


_AUDIT_DEFAULTS = {
    "query": "What is the notice period?",
    "template_id": "legal_analysis_balanced",
    "status": "answered",
    "latency_ms": 12.5,
    "flags": {"hallucination_warning": False, "cache_hit": False},
}


def make_audit(tenant, request_id: str, **fields) -> AuditLog:
    """One audit row of `tenant` (as the pipeline's RecordStage would write it)."""
    return AuditLog.objects.create(tenant=tenant, request_id=request_id, **{**_AUDIT_DEFAULTS, **fields})
