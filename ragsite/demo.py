"""The demo matter: the contracts in demo/documents/, described by demo/documents.json, loaded into
one case of the demo tenant (used by `manage.py demo_setup`).

Idempotent: the same bytes in the same case are a duplicate, so a second run adds nothing. A document
whose ingestion failed (or was interrupted) is ingested again. Ingestion runs in this process, as in
`manage.py ingest`; a failing document is reported and the others are still loaded.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from rag import services as rag_services
from rag.ingest import service
from ragsite.env import BASE_DIR
from tenants.models import Tenant

logger = logging.getLogger(__name__)

DEMO_DIR = BASE_DIR / "demo"
DEMO_CASE = "Demo matter: commercial contracts"


@dataclass(frozen=True)
class DemoDocument:
    path: Path
    fields: service.DocumentFields


@dataclass
class LoadSummary:
    ingested: int = 0
    already_loaded: int = 0
    failed: int = 0
    passages: int = 0  # of the documents ingested by this run

    def __str__(self) -> str:
        return (
            f"{self.ingested} ingested ({self.passages} passages), "
            f"{self.already_loaded} already loaded, {self.failed} failed"
        )


def demo_documents(directory: Path | None = None) -> list[DemoDocument]:
    """The manifest's documents, in order, with the fields to upload them with."""
    directory = directory or DEMO_DIR
    manifest = json.loads((directory / "documents.json").read_text(encoding="utf-8"))
    return [
        DemoDocument(
            path=directory / "documents" / entry["file"],
            fields=service.DocumentFields(
                title=entry["title"],
                source_type=entry["source_type"],
                doc_type=entry["doc_type"],
                jurisdiction=entry["jurisdiction"],
                document_date=date.fromisoformat(entry["document_date"]) if entry["document_date"] else None,
                sensitivity=entry["sensitivity"],
                metadata=entry["metadata"],
            ),
        )
        for entry in manifest["documents"]
    ]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def demo_documents_load(
    *, tenant: Tenant, report: Callable[[str], None], user=None, directory: Path | None = None
) -> LoadSummary:
    """Upload and ingest the demo documents into the tenant's demo case; `report` gets one line
    per document."""
    case = rag_services.case_get_or_create(tenant=tenant, name=DEMO_CASE, created_by=user)
    summary = LoadSummary()
    for item in demo_documents(directory):
        name = item.path.name
        try:
            content = item.path.read_bytes()
        except OSError as exc:
            summary.failed += 1
            report(f"  failed {name}: {exc}")
            continue
        result = service.ingest_now(
            tenant=tenant, case=case, filename=name, content=content, uploaded_by=user, fields=item.fields
        )
        if result.status == "duplicate":
            summary.already_loaded += 1
            report(f"  already loaded {name}")
        elif result.status == "ok":
            document = result.document
            summary.ingested += 1
            summary.passages += document.chunk_count
            pages, passages = _plural(document.page_count, "page"), _plural(document.chunk_count, "passage")
            report(f"  ingested {name}: {pages}, {passages}")
        else:
            summary.failed += 1
            report(f"  failed {name}: {result.reason}")
    return summary
