"""Small contracts ingested for real, for the review tests."""

from __future__ import annotations

from rag.ingest import service
from rag.models import Chunk, Document, Sensitivity


def ingest(tenant, case, title: str, text: str) -> Document:
    """`text` as a TXT document titled `title` in `case`, extracted, chunked and indexed now."""
    outcome = service.ingest_now(
        tenant=tenant,
        case=case,
        filename=title.lower().replace(" ", "-") + ".txt",
        content=text.encode(),
        fields=service.DocumentFields(title=title),
    )
    assert outcome.status == "ok", outcome.reason
    return outcome.document


def make_confidential(document: Document) -> None:
    """Mark `document` (and its chunks, which copy it for the search SQL) confidential."""
    Document.objects.filter(pk=document.pk).update(sensitivity=Sensitivity.CONFIDENTIAL)
    Chunk.objects.filter(document=document).update(sensitivity=Sensitivity.CONFIDENTIAL)
