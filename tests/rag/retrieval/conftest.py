"""Helpers for retrieval tests: small uploaded documents (real ingestion and embeddings) and
synthetic chunks with hand-made vectors (for index behaviour at a size ingestion would make slow)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from rag.ingest import embedding
from rag.models import EMBEDDING_DIMENSION, Chunk, Document, DocumentStatus


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
