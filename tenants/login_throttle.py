"""Login throttling: failed sign-ins counted per account and per client address in the cache.

Every login form (the staff UI's `/accounts/login/`, the operator's `/admin/login/`, the firm
console's `/manage/login/`) uses `ThrottledLoginMixin`. After `LOGIN_THROTTLE_ACCOUNT_FAILURES`
failures for one username, or `LOGIN_THROTTLE_ADDRESS_FAILURES` from one address, within
`LOGIN_THROTTLE_WINDOW_SECONDS`, further attempts are refused without checking the password for
`LOGIN_THROTTLE_LOCKOUT_SECONDS`, with the time left. The lockout is minutes, not hours, so a
stranger cannot keep a partner out for long; a successful sign-in clears the account's count.

The counters live in the default cache (Redis when REDIS_URL is set, shared by every web process);
a cache outage lets sign-ins through (the cache is optional by design), it never locks everyone out.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache

logger = logging.getLogger(__name__)

MESSAGE = "Too many failed sign-in attempts; try again in {minutes} minute{s}."


def _keys(kind: str, value: str) -> tuple[str, str]:
    # Hashed: a username may hold anything, a cache key may not.
    digest = hashlib.sha256(value.encode()).hexdigest()[:32]
    return f"login-throttle:{kind}:{digest}:failures", f"login-throttle:{kind}:{digest}:until"


def _subjects(*, username: str, address: str) -> list[tuple[str, str, int]]:
    """(kind, value, limit) of each counter a sign-in attempt counts against."""
    subjects = [("account", (username or "").strip().lower(), settings.LOGIN_THROTTLE_ACCOUNT_FAILURES)]
    if address:
        subjects.append(("address", address, settings.LOGIN_THROTTLE_ADDRESS_FAILURES))
    return [subject for subject in subjects if subject[1] and subject[2] > 0]


def login_refusal(*, username: str, address: str) -> str | None:
    """The message refusing a sign-in for this account or address while it is locked, or None."""
    until_keys = [_keys(kind, value)[1] for kind, value, _ in _subjects(username=username, address=address)]
    try:
        until = max(cache.get_many(until_keys).values(), default=0)
    except Exception:  # the cache is optional: fail open
        logger.warning("login throttle: the cache is unavailable; sign-ins are not throttled")
        return None
    left = until - time.time()
    if left <= 0:
        return None
    minutes = max(1, math.ceil(left / 60))
    return MESSAGE.format(minutes=minutes, s="" if minutes == 1 else "s")


def login_failed(*, username: str, address: str) -> None:
    """Count a failed sign-in against the account and the address; lock whichever reaches its
    limit (the count starts again after the lockout)."""
    for kind, value, limit in _subjects(username=username, address=address):
        failures_key, until_key = _keys(kind, value)
        try:
            cache.add(failures_key, 0, timeout=settings.LOGIN_THROTTLE_WINDOW_SECONDS)
            try:
                failures = cache.incr(failures_key)
            except ValueError:  # expired between add and incr
                cache.set(failures_key, failures := 1, timeout=settings.LOGIN_THROTTLE_WINDOW_SECONDS)
            if failures >= limit:
                lockout = settings.LOGIN_THROTTLE_LOCKOUT_SECONDS
                cache.set(until_key, time.time() + lockout, timeout=lockout)
                cache.delete(failures_key)
                logger.warning(
                    "login throttle: %s locked for %s s after %s failures", kind, lockout, failures
                )
        except Exception:  # the cache is optional: fail open
            logger.warning("login throttle: the cache is unavailable; a failure was not counted")


def login_succeeded(*, username: str) -> None:
    """A correct sign-in clears the account's failure count."""
    for kind, value, _ in _subjects(username=username, address=""):
        try:
            cache.delete(_keys(kind, value)[0])
        except Exception:  # the cache is optional
            logger.warning("login throttle: the cache is unavailable")


def client_address(request) -> str:
    """The address a request comes from: REMOTE_ADDR as the WSGI server sets it, never a header
    the client could choose."""
    return request.META.get("REMOTE_ADDR", "") if request is not None else ""


class ThrottledLoginMixin:
    """For a Django `AuthenticationForm`: refuse a locked account or address before the password
    is checked, count a wrong password, clear the account's count on success."""

    def clean(self):
        username = self.data.get("username", "") if self.data else ""
        address = client_address(self.request)
        refusal = login_refusal(username=username, address=address)
        if refusal:
            raise forms.ValidationError(refusal, code="throttled")
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            if self.user_cache is None and username and self.data.get("password"):
                login_failed(username=username, address=address)
            raise
        if self.user_cache is not None:
            login_succeeded(username=username)
        return cleaned


class ThrottledAuthenticationForm(ThrottledLoginMixin, AuthenticationForm):
    """The staff UI's login form (`/accounts/login/`)."""


class ThrottledAdminAuthenticationForm(ThrottledLoginMixin, AdminAuthenticationForm):
    """The operator site's login form (`/admin/login/`)."""
