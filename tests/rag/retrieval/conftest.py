"""Helpers for retrieval tests: small uploaded documents (real ingestion and embeddings) and
synthetic chunks with hand-made vectors (for index behaviour at a size ingestion would make slow)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from rag.ingest import embedding
from rag.models import EMBEDDING_DIMENSION, Chunk, Document, DocumentStatus
from tests.ragsite.pg_proxy import default_db_through, proxy  # noqa: F401  (fixtures for connection retries)

# Contract clauses numbered like real ones, with near-miss numbers as decoys (identifier tests).
CLAUSES = {
    "payment": "10.2 Payment. The Buyer shall pay each invoice within thirty days of delivery.",
    "notices": "Section 10.25 Notices. Notices under this Section must be in writing, see Section 110.2.",
    "termination": "Section 10 Termination. Section 10 applies to termination; Section 3 to renewal.",
    "ucc": "Under UCC \u00a7 2-207 additional terms in an acceptance are proposals for addition.",
    "ucc_dash": "Battle of the forms: \u00a72\u2013207 of the Uniform Commercial Code governs here.",
    "decoy": "Section 12-207 of the municipal code limits parking of delivery trucks to 10 days.",
    "motion": "The complaint was dismissed under Rule 12(b)(6); see 123 F.3d 456 (9th Cir. 1997).",
    "other_cite": "The court relied on 123 F.3d 457 and on Rule 12(b)(1) for standing.",
}


@pytest.fixture
def ingest_text(upload):
    """ingest_text(case, text, **fields) -> Document: a one-file TXT upload, fully indexed."""

    def _ingest(case, text: str, *, filename: str = "note.txt", **fields) -> Document:
        document = upload(case, filename, content=text.encode(), filename=filename, **fields).document
        document.refresh_from_db()
        assert document.status == DocumentStatus.READY, document.error_message
        return document

    return _ingest


def unit(vector) -> np.ndarray:
    vector = np.asarray(vector, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def make_document(case, title: str, **fields) -> Document:
    """A ready document row without a file, for synthetic chunks."""
    return Document.objects.create(
        tenant=case.tenant,
        case=case,
        title=title,
        original_filename=f"{title}.txt",
        mime_type="text/plain",
        size_bytes=1,
        sha256=hashlib.sha256(title.encode()).hexdigest(),
        status=DocumentStatus.READY,
        embedding_model=embedding.model_id(),
        **fields,
    )


def add_chunks(document: Document, vectors, *, texts=None, embedding_model=None):
    """One chunk per vector (text: `texts[i]` or a filler), with the document's filter fields
    copied as ingestion does."""
    start = document.chunks.count()
    texts = texts or [f"synthetic passage {start + i}" for i in range(len(vectors))]
    chunks = [
        Chunk(
            tenant_id=document.tenant_id,
            document=document,
            case_id=document.case_id,
            index=start + i,
            text=texts[i],
            char_start=0,
            char_end=len(texts[i]),
            text_hash=f"{document.pk}-{start + i}",
            embedding=np.asarray(vector, dtype=np.float32),
            embedding_model=embedding_model or embedding.model_id(),
            source_type=document.source_type,
            doc_type=document.doc_type,
            jurisdiction=document.jurisdiction,
            document_date=document.document_date,
            sensitivity=document.sensitivity,
        )
        for i, vector in enumerate(vectors)
    ]
    return Chunk.objects.bulk_create(chunks, batch_size=500)


@pytest.fixture
def rng():
    return np.random.default_rng(20240607)


@pytest.fixture
def random_unit(rng):
    return lambda: unit(rng.standard_normal(EMBEDDING_DIMENSION))
