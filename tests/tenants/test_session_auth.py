"""Session users act for their active tenant, switchable among their own memberships."""

import pytest
from rest_framework.test import APIClient

from tenants.models import Role
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

CURRENT = "/api/v1/tenants/current"
SWITCH = "/api/v1/tenants/switch"


@pytest.fixture
def two_tenant_user(tenant, other_tenant):
    user = UserFactory()
    MembershipFactory(tenant=tenant, user=user, role=Role.VIEWER)
    MembershipFactory(tenant=other_tenant, user=user, role=Role.ADMIN)
    return user


def test_session_user_acts_for_a_membership(api_client, two_tenant_user):
    api_client.force_login(two_tenant_user)
    body = api_client.get(CURRENT).json()
    assert body["via"] == "session"
    assert body["tenant"]["slug"] in {"acme-law", "globex-legal"}


def test_switching_changes_tenant_and_role(api_client, two_tenant_user):
    api_client.force_login(two_tenant_user)
    assert api_client.post(SWITCH, {"tenant": "globex-legal"}, format="json").status_code == 200
    assert api_client.get(CURRENT).json()["role"] == "admin"
    assert api_client.post(SWITCH, {"tenant": "acme-law"}, format="json").json()["role"] == "viewer"
    assert api_client.get(CURRENT).json()["tenant"]["slug"] == "acme-law"
    assert {m["tenant"]["slug"] for m in api_client.get("/api/v1/tenants/memberships").json()} == {
        "acme-law",
        "globex-legal",
    }


def test_cannot_switch_to_a_tenant_one_is_not_a_member_of(api_client, tenant, other_tenant):
    user = MembershipFactory(tenant=tenant).user
    api_client.force_login(user)
    response = api_client.post(SWITCH, {"tenant": "globex-legal"}, format="json")
    assert response.status_code == 404
    assert api_client.get(CURRENT).json()["tenant"]["slug"] == "acme-law"


@pytest.mark.parametrize(
    ("payload", "status"), [({}, 400), ({"tenant": "../etc"}, 400), ({"tenant": "nobody"}, 404)]
)
def test_switch_bad_input(api_client, member, payload, status):
    api_client.force_login(member)
    assert api_client.post(SWITCH, payload, format="json").status_code == status


def test_removed_membership_falls_back_to_a_remaining_one(api_client, two_tenant_user, other_tenant):
    api_client.force_login(two_tenant_user)
    api_client.post(SWITCH, {"tenant": "globex-legal"}, format="json")
    two_tenant_user.memberships.filter(tenant=other_tenant).delete()
    assert api_client.get(CURRENT).json()["tenant"]["slug"] == "acme-law"


def test_user_without_a_tenant_gets_403_no_active_tenant(api_client, db):
    api_client.force_login(UserFactory())
    response = api_client.get(CURRENT)
    assert response.status_code == 403
    assert response.json()["error_type"] == "NoActiveTenant"
    assert api_client.get("/api/v1/tenants/memberships").json() == []


def test_session_writes_need_csrf(tenant):
    user = MembershipFactory(tenant=tenant, role=Role.ADMIN).user
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post("/api/v1/tenants/api-keys", {"name": "k"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["message"]


def test_password_login_through_the_session(tenant):
    user = MembershipFactory(tenant=tenant).user
    client = APIClient()
    assert client.login(username=user.username, password="correct horse battery staple")
    assert client.get(CURRENT).status_code == 200
