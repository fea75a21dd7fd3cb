"""rag.service.RAGService: the spec's Python API over the real pipeline (extractive provider)."""

from __future__ import annotations

import pytest

from rag.models import AuditLog
from rag.service import Answer, RAGService
from ragsite.exceptions import ConfigurationError, InvalidQuery, LLMUnavailable, NotFound
from tests.rag.llm.conftest import Received, Reply, closed_port_url, start_server  # noqa: F401  (fixtures)
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
def test_health_check_reports_the_spec_fields(tenant, redis_url):
    # Real database, pgvector and Redis, packaged models, the offline provider: all is well.
    report = RAGService(tenant).health_check()
    assert report["status"] == "healthy", report
    assert report["vector_store"] == "connected"
    assert report["ollama"] == "not_used"
    assert report["embedding_model"] in ("loaded", "not_loaded")
    assert report["timestamp"].endswith("Z")


@pytest.mark.django_db
def test_ollama_health_is_unreachable_without_a_server(tenant, settings):
    settings.RAG_LLM_PROVIDER = "ollama"
    settings.OLLAMA_HOST = "http://127.0.0.1:9"  # discard port: nothing listens
    report = RAGService(tenant).health_check()
    assert report["ollama"] == "unreachable"
    assert report["status"] == "degraded"  # a query would be a 503


@pytest.mark.django_db
def test_health_check_agrees_with_the_health_api(tenant, api_client, ollama_settings, start_server):  # noqa: F811
    down = RAGService(tenant).health_check()
    assert down["status"] == api_client.get("/api/v1/health").json()["status"] == "degraded"
    ollama = start_server(ollama_api)
    ollama_settings.OLLAMA_HOST = ollama.url
    up = RAGService(tenant).health_check()
    assert up["status"] == api_client.get("/api/v1/health").json()["status"] == "healthy"
    assert up["ollama"] == "connected" and up["ollama_models"] == ["mistral:7b"]


@pytest.mark.django_db
def test_health_check_contacts_the_service_ollama_host(tenant, ollama_settings, start_server):  # noqa: F811
    ollama = start_server(ollama_api)
    report = RAGService(tenant, ollama_host=ollama.url).health_check()
    assert report["status"] == "healthy" and report["ollama"] == "connected"
    assert [r.path for r in ollama.received] == ["/api/tags"]
    # OLLAMA_HOST itself (a closed port) is still what a service without ollama_host checks.
    assert RAGService(tenant).health_check()["ollama"] == "unreachable"


# --- The spec's constructor: RAGService(ollama_host=..., vector_store_url=..., embedding_model=...)


def ollama_api(received: Received) -> Reply:
    """A fake Ollama with mistral:7b pulled: /api/tags lists it; /api/generate answers from the
    prompt's first numbered passage, citing it."""
    if received.path == "/api/tags":
        return Reply(200, {"models": [{"name": "mistral:7b", "model": "mistral:7b"}]})
    if received.path != "/api/generate":
        return Reply(404, b"404 page not found", headers={"Content-Type": "text/plain"})
    return Reply(200, {"model": "mistral:7b", "response": OLLAMA_ANSWER, "done": True, "done_reason": "stop"})


OLLAMA_ANSWER = "The obligations survive termination for five years [1]."


@pytest.fixture
def ollama_settings(settings, closed_port_url):  # noqa: F811
    """The ollama provider, with OLLAMA_HOST a port nothing listens on."""
    settings.RAG_LLM_PROVIDER = "ollama"
    settings.OLLAMA_HOST = closed_port_url
    settings.OLLAMA_MODEL = "mistral:7b"
    settings.OLLAMA_TIMEOUT_SECONDS = 2
    return settings


@pytest.mark.django_db
def test_spec_keyword_form_with_tenant_and_for_tenant_answer(tenant, corpus, closed_port_url):  # noqa: F811
    spec_kwargs = {"vector_store_url": closed_port_url, "embedding_model": "all-MiniLM-L6-v2"}
    by_keyword = RAGService(tenant="acme-law", **spec_kwargs)
    by_factory = RAGService.for_tenant("acme-law", **spec_kwargs)
    for service in (by_keyword, by_factory):
        assert service.tenant == tenant
        # vector_store_url is accepted and unused: search runs in pgvector, nothing calls the URL.
        answer = service.query("How long do the confidentiality obligations survive termination?")
        assert answer.answer and "five years" in answer.answer
        assert answer.citations[0]["document_id"] == corpus["nda"].pk


@pytest.mark.django_db
def test_spec_form_without_a_tenant_is_a_configuration_error_naming_it():
    with pytest.raises(ConfigurationError) as raised:
        RAGService(ollama_host="http://localhost:11434", vector_store_url="http://localhost:8001")
    assert "tenant" in raised.value.message and "tenant" in raised.value.details


@pytest.mark.django_db
def test_ollama_host_is_the_server_that_service_talks_to(tenant, corpus, ollama_settings, start_server):  # noqa: F811
    ollama = start_server(ollama_api)
    question = "How long do the confidentiality obligations survive termination?"
    answer = RAGService.for_tenant(tenant, ollama_host=ollama.url + "/").query(question, use_cache=False)
    generate = [r for r in ollama.received if r.path == "/api/generate"]
    assert len(generate) == 1 and question in generate[0].json()["prompt"]
    assert answer.answer == OLLAMA_ANSWER
    assert answer.result["provenance"]["model_provider"] == "ollama"
    assert answer.citations[0]["document_id"] == corpus["nda"].pk
    # The process-wide OLLAMA_HOST (a closed port) is untouched: a service without ollama_host fails.
    with pytest.raises(LLMUnavailable):
        RAGService(tenant).query(question, use_cache=False)
    assert len([r for r in ollama.received if r.path == "/api/generate"]) == 1


@pytest.mark.django_db
@pytest.mark.parametrize("host", ["localhost:11434", "ftp://ollama", "http://"])
def test_ollama_host_that_is_not_an_http_url_is_a_configuration_error(tenant, ollama_settings, host):
    with pytest.raises(ConfigurationError) as raised:
        RAGService(tenant, ollama_host=host)
    assert raised.value.details == {"ollama_host": "The server's URL, such as http://localhost:11434."}


@pytest.mark.django_db
def test_ollama_host_with_another_provider_is_a_configuration_error(tenant, settings):
    settings.RAG_LLM_PROVIDER = "extractive"
    with pytest.raises(ConfigurationError) as raised:
        RAGService(tenant, ollama_host="http://localhost:11434")
    assert "RAG_LLM_PROVIDER is 'extractive'" in raised.value.message


@pytest.mark.django_db
def test_embedding_model_must_be_the_index_model(tenant, settings):
    settings.EMBEDDING_MODEL = "all-MiniLM-L6-v2"
    assert RAGService(tenant, embedding_model="all-MiniLM-L6-v2").embedding_model == "all-MiniLM-L6-v2"
    hub_name = RAGService(tenant, embedding_model="sentence-transformers/all-MiniLM-L6-v2")
    assert hub_name.embedding_model == "all-MiniLM-L6-v2"
    with pytest.raises(ConfigurationError) as raised:
        RAGService(tenant, embedding_model="nomic-embed-text")
    assert raised.value.message == (
        "embedding_model 'nomic-embed-text' does not match the index's model 'all-MiniLM-L6-v2'."
    )
    assert raised.value.status_code == 503 and raised.value.error_type == "ConfigurationError"
