"""Clause signals: computed once per document (at ingestion, or when a review first needs them),
one row per clause type with the paragraph that reads most like it, and gone with a reindex."""

from __future__ import annotations

import pytest

from rag.models import ClauseSignal, Document
from rag.review import signals
from rag.review.model import clause_model

INSURANCE = (
    "2. Insurance. Lonestar shall carry commercial general liability insurance of at least five million "
    "dollars ($5,000,000) per occurrence under this Agreement."
)
CONTRACT = (
    "SPONSORSHIP AGREEMENT between Apache Drilling Corp. and Lonestar Motorsports LLC.\n\n"
    "1. Sponsorship. Lonestar shall display the Apache name on its racing vehicles at each event.\n\n"
    f"{INSURANCE}\n\n"
    "3. Governing Law. This Agreement shall be governed by the laws of the State of Kansas."
)


@pytest.mark.django_db(transaction=True)
def test_indexing_computes_a_documents_signals_once(case, upload, settings):
    settings.RAG_CLAUSE_SIGNALS_AT_INGEST = True
    document = upload(case, "x", content=CONTRACT.encode(), filename="apache.txt").document
    rows = {row.column: row for row in ClauseSignal.objects.filter(document=document)}
    model = clause_model()
    assert set(rows) == set(model.probes)  # one per clause type the model knows
    assert {row.model for row in rows.values()} == {model.version}
    insurance = rows["insurance"]
    text = Document.objects.get(pk=document.pk).text
    assert text[insurance.char_start : insurance.char_end] == INSURANCE  # the clause's own paragraph
    assert model.probability(insurance.score) >= model.threshold
    assert rows["source_code_escrow"].score == signals.NO_EVIDENCE  # never says "escrow"


@pytest.mark.django_db(transaction=True)
def test_a_reindex_drops_the_signals_and_a_review_computes_them_again(case, upload, settings):
    from rag.ingest import service
    from rag.retrieval.filters import SearchFilters
    from rag.review import classify
    from rag.review.columns import BY_KEY

    settings.RAG_CLAUSE_SIGNALS_AT_INGEST = True
    document = upload(case, "x", content=CONTRACT.encode(), filename="apache.txt").document
    settings.RAG_CLAUSE_SIGNALS_AT_INGEST = False
    service.document_reindex(tenant=case.tenant, document_id=document.pk)
    assert not ClauseSignal.objects.filter(document=document).exists()
    review = classify.review(
        tenant=case.tenant, filters=SearchFilters(document_ids=(document.pk,)), column=BY_KEY["insurance"]
    )
    assert [(v.document_id, v.present) for v in review.verdicts] == [(document.pk, True)]
    assert ClauseSignal.objects.filter(document=document).count() == len(clause_model().probes)
