"""Small contracts ingested for real, for the review tests."""

from __future__ import annotations

from rag.ingest import service
from rag.models import Document


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
