"""Fixtures for the staff UI: logged-in browsers (Django test clients) per role."""

from __future__ import annotations

import pytest
from django.test import Client

from tenants.models import Role
from tests.factories import MembershipFactory


@pytest.fixture
def login():
    """login(tenant, role) -> a Client logged in as a new user with that role in `tenant`."""

    def _login(tenant, role=Role.MEMBER, client: Client | None = None) -> Client:
        user = MembershipFactory(tenant=tenant, role=role).user
        client = client or Client()
        client.force_login(user)
        client.user = user
        return client

    return _login


@pytest.fixture
def member_browser(tenant, login):
    return login(tenant, Role.MEMBER)


@pytest.fixture
def viewer_browser(tenant, login):
    return login(tenant, Role.VIEWER)
