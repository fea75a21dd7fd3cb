"""Every search returns only the calling tenant's chunks, even for identical documents."""

from __future__ import annotations

import pytest

from rag.ingest import embedding
from rag.retrieval import MODES, SearchFilters, hybrid_search, keyword_search, semantic_search

pytestmark = pytest.mark.django_db

QUERY = "Which state's law governs the supply agreement?"


@pytest.fixture
def twins(case, other_case, upload):
    """The same contract uploaded by both tenants."""
    return upload(case, "contract.docx").document, upload(other_case, "contract.docx").document


def test_semantic_and_keyword_see_only_their_tenant(case, other_case, twins):
    mine, theirs = twins
    vector = embedding.embed([QUERY])[0]
    for tenant, document in ((case.tenant, mine), (other_case.tenant, theirs)):
        semantic = semantic_search(tenant=tenant, query_vector=vector, k=50)
        keyword = keyword_search(tenant=tenant, query="Colorado agreement", k=50)
        assert semantic and {h.document_id for h in semantic} == {document.pk}
        assert keyword and {h.document_id for h in keyword} == {document.pk}


@pytest.mark.parametrize("mode", MODES)
def test_hybrid_sees_only_its_tenant_in_every_mode(case, other_case, twins, mode):
    mine, theirs = twins
    hits = hybrid_search(tenant=case.tenant, query=QUERY, k=50, mode=mode, candidates=100)
    assert hits and {h.document_id for h in hits} == {mine.pk}
    hits = hybrid_search(tenant=other_case.tenant, query=QUERY, k=50, mode=mode, candidates=100)
    assert hits and {h.document_id for h in hits} == {theirs.pk}


def test_filters_naming_another_tenants_ids_find_nothing(case, other_case, twins):
    _, theirs = twins
    filters = SearchFilters(document_ids=(theirs.pk,), case_ids=(other_case.pk,))
    assert hybrid_search(tenant=case.tenant, query=QUERY, k=10, filters=filters) == []
