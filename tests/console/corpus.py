"""Ingested documents for the console's search-backed pages (tuning preview, dry run): imported as
fixtures by the test modules that need them, with the ingestion fixtures of tests/rag."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from rag.models import DocumentStatus
from tests.rag.conftest import _media_in_tmp, case, committed, other_case, upload  # noqa: F401

QUESTION = "termination notice"
OLD_TITLE = "Old <b>statute</b> on notice"
OTHER_FIRM_TITLE = "globexsecretmarker supply terms"


@pytest.fixture
def corpus(case, other_case, upload):  # noqa: F811
    """Two passages of the firm about the question: an old statute (trusted, no recency boost) and
    a recent upload (recency boost, little trust), so recency-only weights put the upload first and
    trust-only weights the statute. The other firm has a passage about the same question."""

    def ingest(case, text, filename, **fields):
        document = upload(case, filename, content=text.encode(), filename=filename, **fields).document
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
