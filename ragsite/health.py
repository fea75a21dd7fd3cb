"""Dependency checks behind GET /api/v1/health (the service spec's `health_check()`).

unhealthy: the database or pgvector is unusable (nothing can be answered).
degraded:  a supporting part is down (cache, broker, model files), or the model provider is
           (then queries are 503 until it is back).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import caches
from django.db import connection as default_connection
from kombu import Connection

from rag.ingest.embedding import model_status
from rag.ingest.scans import ocr_status
from rag.llm.overrides import ollama_host
from ragsite import llm_probe

CONNECTED = "connected"
UNREACHABLE = "unreachable"
READY = "ready"


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
    """The model provider: `status` "ready" when queries can be answered (else the health is
    degraded, since a query would be a 503). Ollama is contacted (`ollama`: reachable or
    unreachable, and the `models` it has); Anthropic needs its key, and is contacted only with
    ANTHROPIC_HEALTH_PROBE on."""
    provider = settings.RAG_LLM_PROVIDER
    if provider == "extractive":
        return {"provider": provider, "status": READY, "detail": "offline, no API key needed"}
    if provider == "anthropic":
        return check_anthropic()
    if provider == "ollama":
        return check_ollama()
    return {"provider": provider, "status": "unknown_provider"}


def check_ollama() -> dict:
    """Ollama's reachability and models (at the calling service's `ollama_host`, if any)."""
    host = ollama_host().strip().rstrip("/")
    model = settings.OLLAMA_MODEL
    probe = llm_probe.cached(("ollama", host), lambda: llm_probe.probe_ollama(host))
    report = {"provider": "ollama", "model": model, "host": host, "ollama": probe.state}
    if probe.state != llm_probe.REACHABLE:
        return {**report, "status": UNREACHABLE, "error": probe.error}
    has_model = llm_probe.ollama_has_model(probe.models, model)
    return {**report, "status": READY if has_model else "model_missing", "models": list(probe.models)}


def check_anthropic() -> dict:
    """Claude: the key is present, and with ANTHROPIC_HEALTH_PROBE the API answers to it."""
    report = {"provider": "anthropic", "model": settings.ANTHROPIC_MODEL}
    if not settings.ANTHROPIC_API_KEY:
        return {**report, "status": "missing_api_key"}
    if not settings.ANTHROPIC_HEALTH_PROBE:
        return {**report, "status": "configured", "anthropic": "not_probed"}
    base_url = settings.ANTHROPIC_BASE_URL or "default"
    probe = llm_probe.cached(("anthropic", base_url, settings.ANTHROPIC_API_KEY), llm_probe.probe_anthropic)
    report["anthropic"] = probe.state
    if probe.state == llm_probe.REACHABLE:
        return {**report, "status": READY}
    status = "invalid_api_key" if probe.state == llm_probe.REJECTED_KEY else UNREACHABLE
    return {**report, "status": status, "error": probe.error}


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
        or report.get("ocr", {}).get("status") == "unavailable"
        or report["llm"]["status"] not in (READY, "configured")
    )
    return "degraded" if degraded else "healthy"


def warm_up_status() -> dict:
    """This process's model warm-up (rag.warmup): "loading" until the query models are loaded, then
    "ready"; "off" where the process does not warm them."""
    from rag import warmup

    return warmup.state()


def _loaded(report: dict) -> bool:
    """Without a warm-up, the process is ready once a question has loaded its models."""
    return report["embedding_model"]["status"] == "loaded" and report["reranker"]["status"] in (
        "loaded",
        "disabled",
    )


def health_check(connection=None) -> dict:
    """Check every dependency; never raises. `ready` says whether this process has loaded the models
    a question needs (a question before that waits for them: seconds, not milliseconds)."""
    database, vector_store = check_database(connection or default_connection)
    report = {
        "database": database,
        "vector_store": vector_store,
        "cache": check_cache(),
        "broker": check_broker(),
        "embedding_model": model_status(),
        "reranker": check_reranker(),
        "ocr": ocr_status(),
        "llm": check_llm(),
    }
    models = warm_up_status()
    return {
        "status": overall_status(report),
        "ready": models["status"] == "ready" or (models["status"] == "off" and _loaded(report)),
        **report,
        "models": models,
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
