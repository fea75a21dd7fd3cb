"""Provider settings one caller sets for itself: `RAGService(ollama_host=...)` talks to its own
Ollama server while the rest of the process keeps OLLAMA_HOST.

A context variable, not a settings change: two services in different threads (or async tasks)
never see each other's host, and nothing leaks past the `with` block.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings

_ollama_host: ContextVar[str | None] = ContextVar("ollama_host", default=None)


def ollama_host() -> str:
    """The Ollama server to talk to: the current caller's host, else settings.OLLAMA_HOST."""
    return _ollama_host.get() or settings.OLLAMA_HOST or ""


@contextmanager
def using_ollama_host(host: str | None) -> Iterator[None]:
    """Within the block, the Ollama provider and the health check use `host` (None: OLLAMA_HOST)."""
    token = _ollama_host.set(host)
    try:
        yield
    finally:
        _ollama_host.reset(token)
