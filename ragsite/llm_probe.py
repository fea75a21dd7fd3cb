"""Is the model provider there? Cheap probes for the health check, cached for a few seconds.

Ollama: `GET {host}/api/tags` (lists the pulled models; generates nothing). Anthropic: `GET
/v1/models?limit=1` with the API key (no tokens spent), only when ANTHROPIC_HEALTH_PROBE is on.
Each probe waits at most RAG_HEALTH_PROBE_TIMEOUT_SECONDS, and its result is reused for
RAG_HEALTH_PROBE_CACHE_SECONDS, so a load balancer polling /api/v1/health does not hammer the
provider, and a provider that is down does not make every health call slow.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

import anthropic
from django.conf import settings

REACHABLE = "reachable"
UNREACHABLE = "unreachable"
REJECTED_KEY = "rejected_key"  # Anthropic answered, but not to this API key


@dataclass(frozen=True)
class Probe:
    """What one probe found: `state` (REACHABLE, UNREACHABLE, REJECTED_KEY), the models the
    server lists (Ollama) and, when it failed, a short reason."""

    state: str
    models: tuple[str, ...] = ()
    error: str = ""


_cache: dict[tuple, tuple[float, Probe]] = {}
_cache_lock = threading.Lock()


def cached(key: tuple, probe: Callable[[], Probe]) -> Probe:
    """`probe()`'s result, reused while it is under RAG_HEALTH_PROBE_CACHE_SECONDS old, per `key`."""
    with _cache_lock:
        hit = _cache.get(key)
    if hit and time.monotonic() - hit[0] < float(settings.RAG_HEALTH_PROBE_CACHE_SECONDS):
        return hit[1]
    result = probe()
    with _cache_lock:
        _cache[key] = (time.monotonic(), result)
    return result


def _timeout() -> float:
    return float(settings.RAG_HEALTH_PROBE_TIMEOUT_SECONDS)


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    return f"{type(exc).__name__}: {reason}"[:200]


def probe_ollama(host: str) -> Probe:
    """The Ollama server at `host` and the models it has pulled (`GET /api/tags`)."""
    try:
        with urllib.request.urlopen(f"{host}/api/tags", timeout=_timeout()) as response:  # noqa: S310
            body = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:  # refused, timeout, HTTP error, not JSON
        return Probe(UNREACHABLE, error=_reason(exc))
    entries = body.get("models") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return Probe(UNREACHABLE, error='not an Ollama reply (no "models" list)')
    names = (entry.get("name") or entry.get("model") for entry in entries if isinstance(entry, dict))
    return Probe(REACHABLE, models=tuple(name for name in names if isinstance(name, str)))


def ollama_has_model(models: tuple[str, ...], model: str) -> bool:
    """Whether `model` is pulled; Ollama lists an untagged name as `name:latest`."""
    return model in models or (":" not in model and f"{model}:latest" in models)


def probe_anthropic() -> Probe:
    """Whether the Anthropic API answers to ANTHROPIC_API_KEY (`GET /v1/models?limit=1`)."""
    client = anthropic.Anthropic(
        api_key=settings.ANTHROPIC_API_KEY,
        base_url=settings.ANTHROPIC_BASE_URL or None,
        timeout=_timeout(),
        max_retries=0,
    )
    try:
        client.models.list(limit=1)
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
        return Probe(REJECTED_KEY, error=f"HTTP {exc.status_code}")
    except anthropic.APIStatusError as exc:
        return Probe(UNREACHABLE, error=f"HTTP {exc.status_code}")
    except anthropic.AnthropicError as exc:  # refused, timeout, malformed reply
        return Probe(UNREACHABLE, error=_reason(exc))
    return Probe(REACHABLE)
