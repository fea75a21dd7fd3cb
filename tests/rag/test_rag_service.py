"""rag.service.RAGService: the spec's Python API over the real pipeline (extractive provider)."""

from __future__ import annotations

import pytest

from rag.models import AuditLog
from rag.service import Answer, RAGService
from ragsite.exceptions import InvalidQuery, NotFound
from tests.rag.pipeline.conftest import SUPPLY_QUESTION, supply_agreements  # noqa: F401  (fixture)
from tests.rag.retrieval.conftest import ingest_text  # noqa: F401  (fixture)

NDA = (
    "Mutual Non-Disclosure Agreement between Acme Corp and Globex Inc.\n\n"
    "Confidential Information. Each party shall keep the other party's Confidential Information "
    "secret and use it only to evaluate the proposed transaction.\n\n"
    "Term. The obligations of confidentiality survive termination of this Agreement for five years."
)
LEASE = (
    "Commercial Lease between Initech LLC and Landlord Properties.\n\n"
    "Rent. The tenant shall pay monthly rent of 12,000 dollars on the first day of each month.\n\n"
    "Pets. No animals may be kept on the premises without the landlord's written consent."
)


@pytest.fixture
def corpus(case, ingest_text):  # noqa: F811
    return {
        "nda": ingest_text(case, NDA, filename="nda.txt", title="Mutual NDA"),
        "lease": ingest_text(case, LEASE, filename="lease.txt", title="Commercial Lease"),
    }


@pytest.mark.django_db
def test_query_answers_with_citations_into_the_documents(tenant, corpus):
    answer = RAGService(tenant).query("How long do the confidentiality obligations survive termination?")
    assert isinstance(answer, Answer)
    assert answer.answer and "five years" in answer.answer
    assert answer.message is None and answer.confidence >= 0.5
    cited = answer.citations[0]
    assert cited["document_id"] == corpus["nda"].pk
    corpus["nda"].refresh_from_db()
    assert corpus["nda"].text[cited["char_start"] : cited["char_end"]] == cited["snippet"]
    assert AuditLog.objects.filter(tenant=tenant, request_id=answer.request_id).count() == 1


@pytest.mark.django_db
def test_tenant_slug_works_and_unknown_slug_is_not_found(tenant, corpus):
    assert RAGService("acme-law").tenant == tenant
    with pytest.raises(NotFound):
        RAGService("no-such-firm")


@pytest.mark.django_db
def test_source_filter_restricts_to_the_named_document(tenant, corpus):
    service = RAGService(tenant)
    in_lease = service.query("What is the monthly rent?", filters={"source": "lease.txt"})
    assert {c["document_id"] for c in in_lease.citations} == {corpus["lease"].pk}
    in_nda = service.query("What is the monthly rent?", filters={"source": "Mutual NDA"})
    assert corpus["lease"].pk not in in_nda.result["provenance"]["documents_retrieved"]


@pytest.mark.django_db
def test_unknown_source_is_i_dont_know(tenant, corpus):
    answer = RAGService(tenant).query("What is the monthly rent?", filters={"source": "missing.pdf"})
    assert answer.answer is None and answer.citations == []
    assert answer.message == "Information not found in the knowledge base."


@pytest.mark.django_db
def test_max_results_is_top_k_and_conflicts_with_top_k(tenant, supply_agreements):  # noqa: F811
    # Five passages answer the question: by default all five are retrieved, with max_results
    # exactly that many, the same ones top_k gives.
    service = RAGService(tenant)
    everything = service.query(SUPPLY_QUESTION, use_cache=False).result["provenance"]
    assert everything["docs_retrieved"] == len(supply_agreements) == 5
    for n in (1, 3):
        spec = service.query(SUPPLY_QUESTION, filters={"max_results": n}, use_cache=False).result[
            "provenance"
        ]
        top_k = service.query(SUPPLY_QUESTION, top_k=n, use_cache=False).result["provenance"]
        assert spec["docs_retrieved"] == n
        assert spec["documents_retrieved"] == top_k["documents_retrieved"]
    with pytest.raises(InvalidQuery) as refused:
        service.query(SUPPLY_QUESTION, filters={"max_results": 1}, top_k=2)
    assert "filters.max_results" in refused.value.details


@pytest.mark.django_db
def test_off_topic_question_is_i_dont_know(tenant, corpus):
    answer = RAGService(tenant).query("What is the meaning of life?")
    assert answer.answer is None and answer.citations == [] and answer.confidence == 0.0
    assert answer.message == "Information not found in the knowledge base."


@pytest.mark.django_db
def test_health_check_reports_the_spec_fields(tenant):
    report = RAGService(tenant).health_check()
    assert report["status"] in ("healthy", "degraded", "unhealthy")
    assert report["vector_store"] == "connected"
    assert report["ollama"] == "not_used"
    assert report["embedding_model"] in ("loaded", "not_loaded")
    assert report["timestamp"].endswith("Z")


@pytest.mark.django_db
def test_ollama_health_is_unreachable_without_a_server(tenant, settings):
    settings.RAG_LLM_PROVIDER = "ollama"
    settings.OLLAMA_HOST = "http://127.0.0.1:9"  # discard port: nothing listens
    assert RAGService(tenant).health_check()["ollama"] == "unreachable"
