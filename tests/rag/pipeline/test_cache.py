"""The answer cache: hits, what the key depends on, invalidation by version bumps, when it is skipped,
and that entries really live in Redis when the suite runs with one."""

import pytest
import redis
from django.core.cache import caches
from prometheus_client import REGISTRY

from rag import services as rag_services
from rag.models import AuditLog
from rag.pipeline import cache
from rag.pipeline.run import run_query
from rag.retrieval.service import Reader
from templates_admin import services as template_services
from tenants.models import Role
from tests.factories import UserFactory
from tests.rag.llm.conftest import Reply

QUESTION = "Is there a confidentiality clause?"


def ask(tenant, question=QUESTION, **options):
    return run_query(tenant=tenant, question=question, **options)


def sample(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.django_db
def test_the_same_question_again_is_a_cache_hit_with_a_new_request_id(tenant, corpus, counted_extractive):
    first = ask(tenant)
    hits = sample("rag_cache_hits_total", tenant=tenant.slug)
    second = ask(tenant, "  is there a CONFIDENTIALITY clause? ")
    assert len(counted_extractive) == 1  # the second answer came from the cache
    assert second.cache_hit and second.halted == "cache_hit"
    assert second.cache_key == first.cache_key
    result = second.result
    assert result["flags"]["cache_hit"] is True and first.result["flags"]["cache_hit"] is False
    assert result["request_id"] == second.request_id != first.request_id
    assert result["provenance"]["cached_request_id"] == first.request_id
    for field in ("answer", "citations", "follow_up_questions", "confidence_score", "disclaimer"):
        assert result[field] == first.result[field]
    assert set(result["provenance"]["timing"]["stages"]) == {"sanitize_ms", "cache_lookup_ms"}
    assert sample("rag_cache_hits_total", tenant=tenant.slug) == hits + 1
    row = AuditLog.objects.get(request_id=second.request_id)
    assert row.cache_hit and row.tokens_used == 0 and row.status == "answered"


@pytest.mark.django_db
def test_a_miss_is_counted_and_stored(tenant, corpus):
    misses = sample("rag_cache_misses_total", tenant=tenant.slug)
    ctx = ask(tenant)
    assert not ctx.cache_hit and ctx.stage_metadata["cache_store"] == {"stored": True}
    assert cache.get(ctx.cache_key) == {"result": ctx.result}
    assert sample("rag_cache_misses_total", tenant=tenant.slug) == misses + 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    [
        {"top_k": 3},
        {"citation_style": "bracketed_ids"},
        {"strictness": "strict"},
        {"template_id": "legal_analysis_terse"},
        {"response_style": "detailed"},
        {"follow_up_count": 3},
        {"filters": {"doc_types": ["other"]}},
        {"filters": {"jurisdictions": ["Delaware"]}},
        {"similarity_threshold": 0.2},
        {"search_mode": "keyword"},
    ],
)
def test_the_key_changes_with_answer_changing_options(tenant, corpus, change):
    first = ask(tenant)
    other = ask(tenant, **change)
    assert other.cache_key != first.cache_key and not other.cache_hit
    assert ask(tenant, **change).cache_hit  # and that variant is cached under its own key


@pytest.mark.django_db
def test_the_key_changes_with_what_the_reader_may_read_not_with_who_asks(
    tenant, case, corpus, member, ingest_text
):
    from rag.models import Sensitivity

    memo = ingest_text(
        case, "Board memo. Confidentiality bonus: $90,000.", sensitivity=Sensitivity.CONFIDENTIAL
    )
    memo.confidential_readers.add(member)
    anonymous = ask(tenant)
    other_user = ask(tenant, user_id=UserFactory().pk)  # reads no confidential document either
    user = ask(tenant, user_id=member.pk)
    admin = ask(tenant, reader=Reader(user_id=member.pk, role=Role.ADMIN), user_id=member.pk)
    assert other_user.cache_hit and other_user.cache_key == anonymous.cache_key
    # The member reads the memo, and so does an admin (every confidential document of the tenant).
    assert not user.cache_hit and user.cache_key != anonymous.cache_key
    assert admin.cache_hit and admin.cache_key == user.cache_key


@pytest.mark.django_db
def test_temperature_is_not_in_the_key_of_the_deterministic_extractive_provider(tenant, corpus, settings):
    settings.RAG_LLM_PROVIDER = "extractive"
    cold = ask(tenant, temperature=0.0)
    warm = ask(tenant, temperature=0.9)
    assert warm.cache_hit and warm.cache_key == cold.cache_key


@pytest.mark.django_db
def test_temperature_is_in_the_key_of_a_sampling_model(tenant, corpus, settings, start_server):
    ollama = start_server(
        lambda received: Reply(200, {"model": "mistral:7b", "response": "Yes [1].", "done": True})
    )
    settings.RAG_LLM_PROVIDER, settings.OLLAMA_HOST = "ollama", ollama.url
    cold = ask(tenant, temperature=0.0)
    warm = ask(tenant, temperature=0.9)
    assert not warm.cache_hit and warm.cache_key != cold.cache_key
    assert ask(tenant, temperature=0.9).cache_hit
    assert [r.json()["options"]["temperature"] for r in ollama.received] == [0.0, 0.9]


@pytest.mark.django_db
def test_the_key_differs_between_tenants(tenant, other_tenant, corpus, case, other_case, ingest_text):
    from .conftest import MSA

    ingest_text(other_case, MSA, filename="acme-globex-msa.txt")
    mine = ask(tenant)
    theirs = ask(other_tenant)
    assert mine.cache_key != theirs.cache_key and not theirs.cache_hit


@pytest.mark.django_db
def test_a_new_document_invalidates(tenant, case, corpus, ingest_text):
    first = ask(tenant)
    ingest_text(
        case, "Side letter. Confidentiality obligations bind affiliates too.", filename="side-letter.txt"
    )
    after = ask(tenant)
    assert after.index_version == first.index_version + 1
    assert after.cache_key != first.cache_key and not after.cache_hit


@pytest.mark.django_db
def test_new_ranking_weights_invalidate(tenant, corpus):
    first = ask(tenant)
    rag_services.ranking_weights_set(
        tenant=tenant, similarity_weight=0.7, recency_weight=0.2, trust_weight=0.1
    )
    after = ask(tenant)
    assert after.weights_version == first.weights_version + 1
    assert after.cache_key != first.cache_key and not after.cache_hit
    assert ask(tenant).cache_hit


@pytest.mark.django_db
def test_editing_a_template_invalidates(tenant, corpus):
    builtin = ask(tenant)
    # Editing a built-in gives the tenant its own copy: a different template, so a miss.
    template_services.template_update(
        tenant=tenant, template_id="legal_analysis_balanced", data={"instructions_block": "Be brief."}
    )
    copy = ask(tenant)
    assert copy.template.tenant_id == tenant.pk and not copy.cache_hit
    assert copy.cache_key != builtin.cache_key
    assert ask(tenant).cache_hit
    # Editing the tenant's copy bumps its version: a miss again.
    template_services.template_update(
        tenant=tenant, template_id="legal_analysis_balanced", data={"instructions_block": "Be very brief."}
    )
    edited = ask(tenant)
    assert edited.template.version == copy.template.version + 1
    assert edited.cache_key != copy.cache_key and not edited.cache_hit
    assert "Be very brief." in edited.prompt.user


@pytest.mark.django_db
def test_a_changed_answer_setting_invalidates(tenant, corpus, settings):
    first = ask(tenant)
    settings.MIN_CONFIDENCE_THRESHOLD = 0.6
    second = ask(tenant)
    assert second.cache_key != first.cache_key and not second.cache_hit
    settings.RAG_MIN_SEMANTIC_SIMILARITY = 0.1
    third = ask(tenant)
    assert third.cache_key != second.cache_key and not third.cache_hit
    settings.RAG_RECENCY_WEIGHT = 0.3  # the tenant has no weights of its own: it ranks with these
    fourth = ask(tenant)
    assert fourth.cache_key != third.cache_key and not fourth.cache_hit


@pytest.mark.django_db
def test_the_default_follow_up_count_and_the_answerability_bar_are_in_the_key(tenant, corpus, settings):
    first = ask(tenant)
    settings.RAG_DEFAULT_FOLLOW_UP_COUNT = 0  # a request without a count gets this many
    second = ask(tenant)
    assert not second.cache_hit and second.result["follow_up_questions"] == []
    assert len(first.result["follow_up_questions"]) > 0
    settings.RAG_MIN_ANSWERABILITY = 0.99  # "not found" is decided by this bar
    third = ask(tenant)
    assert third.cache_key != second.cache_key and not third.cache_hit


@pytest.mark.django_db
def test_services_talking_to_different_ollama_servers_do_not_share_answers(
    tenant, corpus, settings, start_server
):
    from rag.service import RAGService

    servers = [
        start_server(lambda received, text=text: Reply(200, {"model": "m", "response": text, "done": True}))
        for text in ("First server [1].", "Second server [1].")
    ]
    settings.RAG_LLM_PROVIDER, settings.OLLAMA_MODEL = "ollama", "m"
    answers = [RAGService(tenant=tenant, ollama_host=server.url).query(QUESTION) for server in servers]
    assert [len(server.received) for server in servers] == [1, 1]
    assert not answers[1].result["flags"]["cache_hit"]


@pytest.mark.django_db
def test_use_cache_false_neither_reads_nor_writes(tenant, corpus, counted_extractive):
    ask(tenant)
    skipped = ask(tenant, use_cache=False)
    assert not skipped.cache_hit and skipped.cache_key is None
    assert "cache_store" not in skipped.stage_metadata
    assert len(counted_extractive) == 2
    assert skipped.result["flags"]["cache_hit"] is False


@pytest.mark.django_db
def test_a_dry_run_neither_reads_nor_writes(tenant, corpus, counted_extractive):
    ask(tenant)
    dry = ask(tenant, dry_run=True)
    assert not dry.cache_hit and dry.cache_key is None and dry.result["dry_run"] is True
    assert "cache_store" not in dry.stage_metadata
    assert len(counted_extractive) == 1


@pytest.mark.django_db
def test_a_conversation_turn_is_not_cached(tenant, corpus, member):
    first = ask(tenant, conversation_id="c1", user_id=member.pk)
    again = ask(tenant, conversation_id="c1", user_id=member.pk)
    assert first.cache_key is None and again.cache_key is None and not again.cache_hit


@pytest.mark.django_db
def test_an_unreachable_cache_is_a_miss_and_the_answer_is_still_served(tenant, corpus, settings):
    backend = settings.CACHES["rag"]["BACKEND"]
    if backend != "django_redis.cache.RedisCache":
        pytest.skip("the answer cache is in-process memory")
    settings.CACHES = {
        **settings.CACHES,
        "rag": {**settings.CACHES["rag"], "LOCATION": "redis://127.0.0.1:1/0"},
    }
    ctx = ask(tenant)
    assert ctx.result["answer"] is not None and not ctx.cache_hit
    assert ctx.errors == []
    assert not ask(tenant).cache_hit


@pytest.mark.django_db
def test_entries_live_in_redis_with_the_ttl(tenant, corpus, settings, redis_url):
    assert settings.CACHES["rag"]["BACKEND"] == "django_redis.cache.RedisCache"
    assert settings.CACHES["rag"]["LOCATION"] == redis_url
    ctx = ask(tenant)
    client = redis.Redis.from_url(redis_url)
    key = caches["rag"].make_key(ctx.cache_key)
    assert client.exists(key) == 1
    assert 0 < client.ttl(key) <= settings.RAG_CACHE_TTL_SECONDS
    # Removing the entry from Redis itself makes the next query a miss: nothing else holds it.
    client.delete(key)
    assert not ask(tenant).cache_hit
    assert client.exists(key) == 1


@pytest.mark.django_db
def test_access_changes_invalidate_cached_answers(tenant, member):
    from rag import selectors
    from rag.models import Sensitivity
    from tests.rag.retrieval.conftest import make_document

    case = rag_services.case_create(tenant=tenant, name="Access matter")
    document = make_document(case, "Board minutes", sensitivity=Sensitivity.CONFIDENTIAL)
    version = selectors.index_version_get(tenant=tenant)
    document.confidential_readers.add(member)
    assert selectors.index_version_get(tenant=tenant) == version + 1
    document.confidential_readers.remove(member)
    assert selectors.index_version_get(tenant=tenant) == version + 2
    document = selectors.document_get(tenant=tenant, document_id=document.pk)
    document.title = "Board minutes 2024"
    document.save()
    assert selectors.index_version_get(tenant=tenant) == version + 2  # no access change
    document.sensitivity = Sensitivity.INTERNAL
    document.save()
    assert selectors.index_version_get(tenant=tenant) == version + 3
