"""Session users act for their active tenant, switchable among their own memberships."""

import pytest
from rest_framework.test import APIClient

from tenants.invitations import invitation_accept, invitation_create
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


def test_session_user_of_one_firm_acts_for_it(api_client, member):
    api_client.force_login(member)
    body = api_client.get(CURRENT).json()
    assert (body["via"], body["tenant"]["slug"]) == ("session", "acme-law")


def test_a_user_of_several_firms_is_asked_never_put_in_the_first(api_client, client, two_tenant_user):
    api_client.force_login(two_tenant_user)
    response = api_client.get(CURRENT)
    assert response.status_code == 403 and response.json()["error_type"] == "TenantChoiceRequired"
    client.force_login(two_tenant_user)
    page = client.get("/ask/")
    assert page.status_code == 302 and page.url.startswith("/accounts/firms/?choose=1")
    chooser = client.get(page.url).content.decode()
    assert "Choose a firm" in chooser and "Acme Law LLP" in chooser and "Globex Legal" in chooser
    assert client.get("/manage/").status_code == 302  # the console asks too, it does not pick


def test_the_chosen_firm_is_remembered_for_the_next_login(client, two_tenant_user):
    client.force_login(two_tenant_user)
    response = client.post("/tenant/switch", {"tenant": "globex-legal", "next": "/ask/"})
    assert response.status_code == 302 and response.url == "/ask/"
    client.logout()
    client.force_login(two_tenant_user)  # a fresh session
    assert client.get("/ask/").context["tenant"].slug == "globex-legal"
    fresh = APIClient()
    fresh.force_login(two_tenant_user)
    assert fresh.get(CURRENT).json()["tenant"]["slug"] == "globex-legal"


def test_a_firm_the_user_joins_does_not_become_their_active_one(client, tenant, other_tenant):
    user = MembershipFactory(tenant=tenant).user
    client.force_login(user)
    assert client.get("/ask/").context["tenant"] == tenant
    inviter = MembershipFactory(tenant=other_tenant, role=Role.OWNER).user
    invitation = invitation_create(
        tenant=other_tenant, identifier=user.username, role=Role.ADMIN, invited_by=inviter
    )
    invitation_accept(invitation_id=invitation.pk, user=user)
    assert client.get("/ask/").context["tenant"] == tenant
    client.logout()
    client.force_login(user)  # a fresh login: asked, not put in the new firm
    assert client.get("/ask/").url.startswith("/accounts/firms/?choose=1")


def test_leaving_a_firm_from_the_firms_page(client, tenant, other_tenant):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    MembershipFactory(tenant=other_tenant, user=user)
    client.force_login(user)
    client.post("/tenant/switch", {"tenant": "acme-law"})
    assert client.post("/accounts/firms/acme-law/leave").status_code == 302
    assert list(user.memberships.values_list("tenant__slug", flat=True)) == ["globex-legal"]
    assert client.get("/ask/").context["tenant"] == other_tenant
    assert client.post("/accounts/firms/acme-law/leave").status_code == 404


def test_the_last_owner_cannot_leave_from_the_firms_page(client, tenant):
    owner = MembershipFactory(tenant=tenant, role=Role.OWNER).user
    client.force_login(owner)
    response = client.post("/accounts/firms/acme-law/leave", follow=True)
    assert "last owner" in response.content.decode()
    assert owner.memberships.filter(tenant=tenant).exists()


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
