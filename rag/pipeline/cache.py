"""The answer cache: finished query results keyed by everything that could change them.

Key = sha256 of the tenant, the normalized question, the template (id, row and version), the
answer-changing options (top_k, citation style, strictness, filters, ...; temperature only for a
model that samples), what the reader may read (a digest of the confidential documents they are
cleared for, or "none": not the user id, so colleagues with the same access share answers), the
model, and the tenant's index and ranking-weights versions. A corpus
change, reindex, template edit or weights change bumps one of those versions, so stale entries
are never read again and expire by TTL (`RAG_CACHE_TTL_SECONDS`): invalidation without scanning
keys. Entries live in the "rag" cache: django-redis, or in-process memory without Redis
(`RAG_CACHE_BACKEND`). A cache outage reads as a miss and a failed write is ignored
(IGNORE_EXCEPTIONS in settings): the answer is still served.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from django.conf import settings
from django.core.cache import caches

logger = logging.getLogger(__name__)

CACHE_ALIAS = "rag"
KEY_VERSION = 2  # bump when the cached result's shape changes


def cache_key(**parts: Any) -> str:
    """A stable key for `parts` (JSON-serialisable; key order does not matter)."""
    canonical = json.dumps({"v": KEY_VERSION, **parts}, sort_keys=True, default=str, separators=(",", ":"))
    return "answer:" + hashlib.sha256(canonical.encode()).hexdigest()


def normalized_question(question: str) -> str:
    """Case and whitespace do not change an answer."""
    return " ".join(question.casefold().split())


def get(key: str) -> dict | None:
    """The cached entry under `key`, or None (also when the cache is down)."""
    try:
        value = caches[CACHE_ALIAS].get(key)
    except Exception as exc:  # a locmem cache never fails; any other backend may, and a miss is safe
        logger.warning("answer cache read failed", extra={"error": f"{type(exc).__name__}: {exc}"})
        return None
    return value if isinstance(value, dict) else None


def set(key: str, entry: dict) -> None:
    """Store `entry` for RAG_CACHE_TTL_SECONDS."""
    caches[CACHE_ALIAS].set(key, entry, timeout=settings.RAG_CACHE_TTL_SECONDS)
