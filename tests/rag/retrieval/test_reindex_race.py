"""A question asked while its document is reindexed: chunks found by the search may be gone by the
time they are reranked and read; they are left out, never a 500 (seen in a served benchmark while
the worker re-chunked documents)."""

from __future__ import annotations

import pytest

from rag.models import Chunk
from rag.retrieval import service as retrieval

pytestmark = pytest.mark.django_db

QUESTION = "How long do the confidentiality obligations survive termination?"
NDA = (
    "Mutual Non-Disclosure Agreement between Acme Corp and Globex Inc.\n\n"
    "Term. The obligations of confidentiality survive termination of this Agreement for five years.\n\n"
    "Governing law. This Agreement is governed by the laws of the State of Delaware.\n\n"
    "Notices. Notices shall be in writing and delivered to the addresses above."
)


@pytest.mark.parametrize("reranking", [True, False])
def test_chunks_deleted_after_the_search_are_left_out(tenant, case, ingest_text, settings, reranking):
    settings.RAG_CHUNK_SIZE = 120  # several passages for a short document
    ingest_text(case, NDA, filename="nda.txt", title="Mutual NDA")
    found = retrieval.search(tenant=tenant, query=QUESTION)
    ranked = retrieval.rank(found, top_k=5, similarity_threshold=0.0)
    assert len(ranked.items) >= 2
    gone = ranked.items[0][0].hit.chunk_id
    Chunk.objects.filter(pk=gone).delete()  # the worker replaced it meanwhile

    result = retrieval.passages(retrieval.rerank(ranked, enabled=reranking))

    assert result.passages and gone not in {p.chunk_id for p in result.passages}
