"""Ingested documents for the console's search-backed pages (tuning preview, dry run): the `corpus`
fixture, imported by the test modules that need it."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from rag import services
from rag.ingest import service
from rag.models import DocumentStatus

QUESTION = "termination notice"
OLD_TITLE = "Old <b>statute</b> on notice"
OTHER_FIRM_TITLE = "globexsecretmarker supply terms"


@pytest.fixture
def corpus(tenant, other_tenant, settings, tmp_path, django_capture_on_commit_callbacks):
    """Two passages of the firm about the question: an old statute (trusted, no recency boost) and
    a recent upload (recency boost, little trust), so recency-only weights put the upload first and
    trust-only weights the statute. The other firm has a passage about the same question."""
    settings.MEDIA_ROOT = tmp_path / "media"
    case = services.case_create(tenant=tenant, name="Acme v. Globex")
    other_case = services.case_create(tenant=other_tenant, name="Globex matter")

    def ingest(case, text, filename, **fields):
        # The ingestion job is enqueued on commit and runs eagerly under the test settings.
        with django_capture_on_commit_callbacks(execute=True):
            uploaded = service.document_upload(
                tenant=case.tenant,
                case=case,
                filename=filename,
                content=text.encode(),
                fields=service.DocumentFields(**fields),
            )
        document = uploaded.document
        document.refresh_from_db()
        assert document.status == DocumentStatus.READY, document.error_message
        return document

    return {
        "old": ingest(
            case,
            "Notice of termination must be in writing.",
            "old.txt",
            title=OLD_TITLE,
            document_date=datetime.date(2001, 1, 1),
            source_type="statute",
        ),
        "new": ingest(
            case,
            "Notice of termination must be given in writing.",
            "new.txt",
            title="Recent upload",
            document_date=timezone.localdate() - datetime.timedelta(days=10),
        ),
        "other_firm": ingest(
            other_case,
            "Notice of termination must be given in writing, globexsecretmarker.",
            "theirs.txt",
            title=OTHER_FIRM_TITLE,
            document_date=timezone.localdate() - datetime.timedelta(days=1),
            source_type="statute",
        ),
    }
