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


HEADED = (
    "SERVICES AGREEMENT between Apache Drilling Corp. and Lonestar Motorsports LLC.\n\n"
    "1. Services. Lonestar shall provide courier services to Apache in Kansas.\n\n"
    "7.0    NON-COMPETITION\n\n"
    "7.1    In the event this Agreement is terminated, the Party in default shall not enter into an "
    "agreement with any other party to provide services similar to those provided herein for a period "
    "of six (6) months from the effective date of termination.\n\n"
    "8.0    GOVERNING LAW\n\n"
    "8.1    This Agreement shall be governed by the laws of the State of Kansas."
)


def test_a_section_heading_standing_alone_is_read_with_its_body():
    spans = signals.paragraphs(HEADED)
    texts = signals.reading_texts(HEADED, spans)
    by_start = {HEADED[s:e][:4]: text for (s, e), text in zip(spans, texts, strict=True)}
    assert by_start["7.1 "].startswith("7.0 NON-COMPETITION\n7.1")  # the body under its heading
    assert by_start["8.1 "].startswith("8.0 GOVERNING LAW\n8.1")  # the next heading takes over
    assert by_start["7.0 "] == "7.0    NON-COMPETITION"  # a heading is read as itself
    assert by_start["1. S"].startswith("1. Services.")  # no heading above it: as is (a sentence is none)


@pytest.mark.django_db(transaction=True)
def test_a_clause_whose_body_never_names_it_is_found_under_its_heading(case, upload, settings):
    settings.RAG_CLAUSE_SIGNALS_AT_INGEST = True
    document = upload(case, "x", content=HEADED.encode(), filename="headed.txt").document
    row = ClauseSignal.objects.get(document=document, column="non_compete")
    text = Document.objects.get(pk=document.pk).text
    assert text[row.char_start : row.char_end].startswith("7.1    In the event")  # the body, quoted as is
    assert clause_model().probability(row.score) >= clause_model().threshold
