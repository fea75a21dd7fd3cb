"""A document deleted while its ingestion task runs (#36, item 17): the task ends quietly as
"deleted" (logged at info), with no exception, no retry and nothing left behind, whichever step of
the ingestion it was at when the document went."""

from __future__ import annotations

import logging

import pytest
from django.core.files.storage import default_storage

from rag import tasks
from rag.ingest import embedding, service
from rag.models import Chunk, Document, DocumentStatus
from ragsite.exceptions import CorruptDocument
from tests.rag.conftest import fixture_bytes

pytestmark = pytest.mark.django_db


def _queued(case) -> Document:
    """An uploaded document waiting for its ingestion task (not run yet)."""
    return service.document_upload(
        tenant=case.tenant,
        case=case,
        filename="contract.txt",
        content=fixture_bytes("contract.txt"),
        enqueue=False,
    ).document


def _delete(document: Document) -> None:
    """What DELETE /documents/<id> does, its file removed as its commit would remove it."""
    name = document.file.name
    service.document_delete(tenant=document.tenant, document_id=document.pk)
    default_storage.delete(name)


def _delete_then(document: Document, then):
    """A stand-in for an ingestion step: the document is deleted (by another request), then the step
    goes on as `then`."""

    def step(*args, **kwargs):
        if Document.objects.filter(pk=document.pk).exists():
            _delete(document)
        return then(*args, **kwargs)

    return step


def _corrupt(*args, **kwargs):
    raise CorruptDocument()


@pytest.mark.parametrize(
    ("target", "name", "then"),
    [
        # Before its file is read: the file is gone with it.
        (service, "_set_progress", service._set_progress),
        # While its text is extracted: the row it would index is gone.
        (service, "extract", service.extract),
        # While it fails to be read: the row it would mark failed is gone.
        (service, "extract", _corrupt),
        # While its passages are embedded.
        (embedding, "embed", embedding.embed),
    ],
    ids=["before-reading", "extracting", "failing", "embedding"],
)
def test_the_task_ends_quietly_as_deleted(case, monkeypatch, caplog, target, name, then):
    document = _queued(case)
    monkeypatch.setattr(target, name, _delete_then(document, then))
    caplog.set_level(logging.INFO, logger="rag")

    result = tasks.ingest_document.apply(args=(document.pk, case.tenant_id))

    assert (result.state, result.result) == ("SUCCESS", "deleted")
    assert result.traceback is None
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not Chunk.objects.filter(document_id=document.pk).exists()
    skipped = [r for r in caplog.records if r.getMessage() == "ingest skipped: the document was deleted"]
    assert [(r.levelname, r.document_id) for r in skipped] == [("INFO", document.pk)]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_document_that_stays_is_still_ingested(case):
    # The same task on a document nobody deletes: the quiet end above is for deleted ones only.
    document = _queued(case)
    result = tasks.ingest_document.apply(args=(document.pk, case.tenant_id))
    assert (result.state, result.result) == ("SUCCESS", DocumentStatus.READY)


def test_a_crash_on_a_document_that_stays_is_still_recorded(case, monkeypatch):
    document = _queued(case)
    monkeypatch.setattr(service, "extract", lambda *args, **kwargs: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # eager tasks propagate (CELERY_TASK_EAGER_PROPAGATES)
        tasks.ingest_document.apply(args=(document.pk, case.tenant_id))
    document.refresh_from_db()
    assert (document.status, document.error_type) == (DocumentStatus.FAILED, "InternalError")
