"""Login throttling (issue #33, item 8) on every login form: the staff UI's, the operator's and the
firm console's. Failures are counted per account and per address in the real Redis cache; a locked
account is refused unchecked with a clear message, for minutes, and works again afterwards."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache

from tenants import login_throttle
from tenants.models import Role
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
ADDRESS = "127.0.0.1"  # the test client's REMOTE_ADDR
DEFAULTS = {  # base settings' defaults (the test settings put the throttle out of the way)
    "LOGIN_THROTTLE_ACCOUNT_FAILURES": 5,
    "LOGIN_THROTTLE_ADDRESS_FAILURES": 20,
    "LOGIN_THROTTLE_WINDOW_SECONDS": 900,
    "LOGIN_THROTTLE_LOCKOUT_SECONDS": 300,
}
LOGIN_FORMS = ["/accounts/login/", "/admin/login/", "/manage/login/"]
THROTTLED = "Too many failed sign-in attempts; try again in 5 minutes."


def _forget(*values: str) -> None:
    for kind in ("account", "address"):
        for value in values:
            cache.delete_many(list(login_throttle._keys(kind, value.lower())))


@pytest.fixture
def throttle(settings):
    """The default limits, and no count left over from another test or run (usernames recur)."""
    for name, value in DEFAULTS.items():
        setattr(settings, name, value)
    names = ["partner", *[f"stranger{n}" for n in range(25)]]
    _forget(ADDRESS, *names)
    yield
    _forget(ADDRESS, *names)


@pytest.fixture
def partner(tenant):
    """An owner of a firm who is also platform staff, so every login form lets them in."""
    user = UserFactory(username="partner", is_staff=True)
    MembershipFactory(tenant=tenant, user=user, role=Role.OWNER)
    return user


def attempt(client, url: str, username: str, password: str):
    return client.post(url, {"username": username, "password": password, "next": url})


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.parametrize("url", LOGIN_FORMS)
def test_six_wrong_passwords_lock_the_account_even_against_the_right_one(client, throttle, partner, url):
    for _ in range(5):
        response = attempt(client, url, "partner", "wrong")
        assert response.status_code == 200 and THROTTLED not in response.content.decode()
    sixth = attempt(client, url, "partner", "wrong")
    assert THROTTLED in sixth.content.decode()
    during = attempt(client, url, "Partner", PASSWORD)  # the right password, any case: still refused
    assert THROTTLED in during.content.decode() and not signed_in(client)


@pytest.mark.parametrize("url", LOGIN_FORMS)
def test_after_the_lockout_the_right_password_works(client, throttle, partner, settings, url):
    settings.LOGIN_THROTTLE_LOCKOUT_SECONDS = 1
    for _ in range(5):
        attempt(client, url, "partner", "wrong")
    assert "try again in 1 minute." in attempt(client, url, "partner", PASSWORD).content.decode()
    time.sleep(1.2)
    assert attempt(client, url, "partner", PASSWORD).status_code == 302 and signed_in(client)


def test_a_successful_login_clears_the_accounts_count(client, throttle, partner):
    for _ in range(4):
        attempt(client, "/accounts/login/", "partner", "wrong")
    assert attempt(client, "/accounts/login/", "partner", PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        response = attempt(client, "/accounts/login/", "partner", "wrong")
    assert THROTTLED not in response.content.decode()
    assert attempt(client, "/accounts/login/", "partner", PASSWORD).status_code == 302


def test_one_address_trying_many_accounts_is_locked_too(client, throttle, partner):
    for n in range(20):  # four each would not lock any one account
        attempt(client, "/accounts/login/", f"stranger{n // 4}", "wrong")
    response = attempt(client, "/accounts/login/", "partner", PASSWORD)
    assert THROTTLED in response.content.decode() and not signed_in(client)


def test_a_locked_account_does_not_lock_other_accounts(client, throttle, partner):
    other = UserFactory(username="stranger24")
    for _ in range(6):
        attempt(client, "/accounts/login/", "partner", "wrong")
    assert attempt(client, "/accounts/login/", other.username, PASSWORD).status_code == 302


def test_zero_switches_the_limits_off(client, throttle, partner, settings):
    settings.LOGIN_THROTTLE_ACCOUNT_FAILURES = settings.LOGIN_THROTTLE_ADDRESS_FAILURES = 0
    for _ in range(8):
        attempt(client, "/accounts/login/", "partner", "wrong")
    assert attempt(client, "/accounts/login/", "partner", PASSWORD).status_code == 302
