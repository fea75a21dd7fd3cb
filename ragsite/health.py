"""Dependency checks behind GET /api/v1/health (the service spec's `health_check()`).

unhealthy: the database or pgvector is unusable (nothing can be answered).
degraded:  answers still work, but a supporting part is down (cache, broker, model files, LLM).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import caches
from django.db import connection as default_connection
from kombu import Connection

from rag.ingest.embedding import model_status

CONNECTED = "connected"
UNREACHABLE = "unreachable"


def _short_error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:200]


def check_database(connection) -> tuple[dict, dict]:
    """(database, vector_store) reports from one round trip."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('server_version'),"
                " (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
            )
            server_version, vector_version = cursor.fetchone()
    except Exception as exc:  # any failure to reach the database is reported, not raised
        connection.close_if_unusable_or_obsolete()
        error = _short_error(exc)
        return (
            {"status": UNREACHABLE, "error": error},
            {"status": UNREACHABLE, "backend": "pgvector", "error": error},
        )
    database = {"status": CONNECTED, "engine": "postgresql", "version": server_version}
    if vector_version is None:
        vector_store = {"status": "missing_extension", "backend": "pgvector", "version": None}
    else:
        vector_store = {"status": CONNECTED, "backend": "pgvector", "version": vector_version}
    return database, vector_store


def check_cache(alias: str = "default") -> dict:
    cache = caches[alias]
    if not hasattr(cache, "client"):  # locmem: nothing to reach
        return {"status": "in_process", "backend": "locmem"}
    try:
        cache.client.get_client(write=True).ping()
    except Exception as exc:
        return {"status": UNREACHABLE, "backend": "redis", "error": _short_error(exc)}
    return {"status": CONNECTED, "backend": "redis"}


def check_broker() -> dict:
    url = settings.CELERY_BROKER_URL
    if not url:
        return {"status": "eager", "detail": "no broker: tasks run in the calling process"}
    try:
        with Connection(url, connect_timeout=1, transport_options={"socket_timeout": 1}) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
    except Exception as exc:
        return {"status": UNREACHABLE, "error": _short_error(exc)}
    return {"status": CONNECTED}


def check_llm() -> dict:
    provider = settings.RAG_LLM_PROVIDER
    if provider == "extractive":
        return {"provider": provider, "status": "ready", "detail": "offline, no API key needed"}
    if provider == "anthropic":
        ready = bool(settings.ANTHROPIC_API_KEY)
        return {
            "provider": provider,
            "model": settings.ANTHROPIC_MODEL,
            "status": "configured" if ready else "missing_api_key",
        }
    return {
        "provider": provider,
        "model": settings.OLLAMA_MODEL,
        "host": settings.OLLAMA_HOST,
        "status": "configured",
    }


def check_reranker() -> dict:
    """The cross-encoder (rag.retrieval.cross_encoder): its files are checked, not loaded (a
    request loads it once per process)."""
    from pathlib import Path

    from rag.retrieval import cross_encoder

    name = settings.RAG_RERANKER_MODEL
    if not settings.ENABLE_RERANKING or not name:
        return {"status": "disabled"}
    directory = cross_encoder.packaged_directory() if name == cross_encoder.PACKAGED else Path(name)
    model = cross_encoder.MODEL_NAME if name == cross_encoder.PACKAGED else Path(name).name
    if directory is None or not directory.is_dir():
        return {"status": "unavailable", "model": model, "detail": f"no model files for {name!r}"}
    return {
        "status": "loaded" if name in cross_encoder.loaded_models() else "not_loaded",
        "model": model,
        "path": str(directory),
    }


def overall_status(report: dict) -> str:
    if report["database"]["status"] != CONNECTED or report["vector_store"]["status"] != CONNECTED:
        return "unhealthy"
    degraded = (
        report["cache"]["status"] == UNREACHABLE
        or report["broker"]["status"] == UNREACHABLE
        or report["embedding_model"]["status"] == "unavailable"
        or report.get("reranker", {}).get("status") == "unavailable"
        or report["llm"]["status"] not in ("ready", "configured")
    )
    return "degraded" if degraded else "healthy"


def health_check(connection=None) -> dict:
    """Check every dependency; never raises."""
    database, vector_store = check_database(connection or default_connection)
    report = {
        "database": database,
        "vector_store": vector_store,
        "cache": check_cache(),
        "broker": check_broker(),
        "embedding_model": model_status(),
        "reranker": check_reranker(),
        "llm": check_llm(),
    }
    return {
        "status": overall_status(report),
        **report,
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
