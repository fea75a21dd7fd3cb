"""API throttling: fixed-window request counters in Redis, per tenant and per credential.

Every authenticated API request counts against two budgets at once, its tenant's
(`API_THROTTLE_TENANT_RATE`) and its credential's (`API_THROTTLE_CLIENT_RATE`: the API key, or the
logged-in user); queries flagged as prompt-injection attempts also count against the much smaller
`API_THROTTLE_INJECTION_RATE` of their credential. Over a budget the answer is 429 with
`Retry-After` (seconds until the window resets).

The injection budget is a sliding window (`injection_attempt_allowed`: a Redis sorted set of the
allowed attempts' times), not a fixed clock minute: five flagged questions at 0:59 and five more at
1:01 are one burst of ten, and the second five are refused.

The counters live in the default cache's Redis, so every web process shares them: one script call
per request increments each counter and starts its window; without Redis, the in-process cache
counts per process.
A Redis outage lets requests through (throttling fails open, the cache is optional by design).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from rest_framework.exceptions import Throttled
from rest_framework.throttling import BaseThrottle

from rag.queries.caller import Caller

logger = logging.getLogger(__name__)

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
_UNITS.update({"d": 86400, "day": 86400})
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*$")


@dataclass(frozen=True)
class Rate:
    """`count` requests per `seconds`; `count` 0 means unlimited."""

    count: int
    seconds: int

    @classmethod
    @lru_cache(maxsize=64)
    def parse(cls, text: str) -> Rate:
        """ "120/min", "5/hour", "10/30s" (= 10 per 30 seconds), "0/min" (unlimited)."""
        match = _RATE.match(str(text).lower())
        unit = match and (_UNITS.get(match[3]) or _UNITS.get(match[3].rstrip("s")))
        if not unit:
            raise ImproperlyConfigured(f"Invalid throttle rate {text!r}: use e.g. '120/min' or '5/hour'.")
        return cls(int(match[1]), unit * int(match[2] or 1))


def _rates() -> dict[str, Rate]:
    return {
        "tenant": Rate.parse(settings.API_THROTTLE_TENANT_RATE),
        "client": Rate.parse(settings.API_THROTTLE_CLIENT_RATE),
        "injection": Rate.parse(settings.API_THROTTLE_INJECTION_RATE),
    }


# INCR each key; a key's first INCR starts its window (EXPIRE). One command whatever the count.
_COUNT_SCRIPT = """
local counts = {}
for i, key in ipairs(KEYS) do
    counts[i] = redis.call('INCR', key)
    if counts[i] == 1 then redis.call('EXPIRE', key, ARGV[i]) end
end
return counts
"""


def _count(keys_and_rates: list[tuple[str, Rate]], now: float) -> list[int] | None:
    """Increment each window counter; their new values, or None when the cache is unavailable."""
    keys = [f"throttle:{key}:{int(now // rate.seconds)}" for key, rate in keys_and_rates]
    lifetimes = [rate.seconds + 1 for _, rate in keys_and_rates]
    try:
        script = _count_script()
        if script is not None:
            return script(keys=[cache.make_key(key) for key in keys], args=lifetimes)
        counts = []
        for key, lifetime in zip(keys, lifetimes, strict=True):
            cache.add(key, 0, timeout=lifetime)
            counts.append(cache.incr(key))
        return counts
    except Exception as exc:  # fail open: a cache outage must not refuse requests
        logger.warning("throttle counters unavailable (%s): request let through", type(exc).__name__)
        return None


def _count_script():
    """The counting script on the default cache's Redis (EVALSHA, loaded on first use), or None
    for a non-Redis cache."""
    if "RedisCache" not in settings.CACHES["default"]["BACKEND"]:
        return None
    from django_redis import get_redis_connection

    return get_redis_connection("default").register_script(_COUNT_SCRIPT)


def _check(budgets: list[tuple[str, Rate]]) -> None:
    """Count one request against each budget; raise Throttled (with the wait) if any is exceeded."""
    budgets = [(key, rate) for key, rate in budgets if rate.count > 0]
    if not budgets:
        return
    now = time.time()
    counts = _count(budgets, now)
    if counts is None:
        return
    waits = [
        rate.seconds - (now % rate.seconds)
        for (_, rate), count in zip(budgets, counts, strict=True)
        if count > rate.count
    ]
    if waits:
        raise Throttled(wait=max(waits))


def _client_ident(request) -> str:
    """The credential a request counts against: its API key, else its user (`Caller.ident`)."""
    return Caller.from_request(request).ident


class TenantClientThrottle(BaseThrottle):
    """DRF throttle of every tenant-scoped request: the tenant's and the credential's budgets."""

    def allow_request(self, request, view) -> bool:
        tenant = getattr(request.auth, "tenant", None)
        if tenant is None:  # unauthenticated or tenant-less: permissions have answered already
            return True
        rates = _rates()
        _check(
            [
                (f"tenant:{tenant.pk}", rates["tenant"]),
                (f"client:{tenant.pk}:{_client_ident(request)}", rates["client"]),
            ]
        )
        return True


# Sliding log: forget attempts older than the window; allow and record this one if fewer than the
# limit remain, else answer how long until the oldest leaves the window. Refused attempts are not
# recorded, so a refused caller is let in again as soon as the window has room.
_SLIDING_SCRIPT = """
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) < limit then
    redis.call('ZADD', key, now, ARGV[4])
    redis.call('EXPIRE', key, math.ceil(window) + 1)
    return {1, '0'}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, tostring(tonumber(oldest[2]) + window - now)}
"""


def injection_attempt_allowed(key: str, rate: Rate, *, now: float | None = None) -> tuple[bool, float]:
    """Count one attempt against a sliding window of `rate`: (allowed, seconds to wait if not).

    On Redis, the allowed attempts' times are kept in a sorted set; without Redis (a development
    cache) it falls back to the fixed-window counter. A cache outage allows the attempt."""
    now = time.time() if now is None else now
    if "RedisCache" not in settings.CACHES["default"]["BACKEND"]:
        counts = _count([(key, rate)], now)
        allowed = counts is None or counts[0] <= rate.count
        return allowed, 0.0 if allowed else rate.seconds - now % rate.seconds
    try:
        from django_redis import get_redis_connection

        script = get_redis_connection("default").register_script(_SLIDING_SCRIPT)
        allowed, wait = script(
            keys=[cache.make_key(f"throttle-sliding:{key}")],
            args=[repr(now), rate.seconds, rate.count, f"{now!r}:{uuid.uuid4().hex[:8]}"],
        )
    except Exception as exc:  # fail open, like the other budgets
        logger.warning("sliding throttle unavailable (%s): request let through", type(exc).__name__)
        return True, 0.0
    return bool(allowed), max(float(wait), 0.0)


def check_injection_budget(request) -> None:
    """Count a query flagged as a prompt-injection attempt against its credential's small budget
    (a sliding window); raise Throttled (429, with the wait) once it is spent."""
    tenant = request.auth.tenant
    rate = _rates()["injection"]
    if rate.count <= 0:
        return
    allowed, wait = injection_attempt_allowed(f"injection:{tenant.pk}:{_client_ident(request)}", rate)
    if not allowed:
        raise Throttled(wait=wait)
