"""Who may enter /manage/: a firm's admins and owners, for their active tenant only."""

from __future__ import annotations

import pytest

from tenants.models import Role
from tenants.services import SESSION_TENANT_KEY
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
PASSWORD = "correct horse battery staple"


@pytest.mark.parametrize("role", [Role.ADMIN, Role.OWNER])
def test_firm_admin_logs_in_and_sees_the_index(client, tenant, role):
    user = MembershipFactory(tenant=tenant, role=role).user
    response = client.post(
        "/manage/login/", {"username": user.username, "password": PASSWORD, "next": "/manage/"}, follow=True
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "Audit logs" in page and "Prompt templates" in page and "API keys" in page
    assert not user.is_staff


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER])
def test_viewer_and_member_are_refused_with_the_reason(client, tenant, role):
    user = MembershipFactory(tenant=tenant, role=role).user
    response = client.post("/manage/login/", {"username": user.username, "password": PASSWORD})
    assert response.status_code == 200
    assert "for your firm&#x27;s admins and owners" in response.content.decode()
    assert "_auth_user_id" not in client.session
    client.force_login(user)  # logged in elsewhere (the staff UI): still no way in
    assert client.get("/manage/").status_code == 302
    assert f"Your role in {tenant.name} is {role}" in client.get("/manage/login/").content.decode()


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER])
def test_a_logged_in_member_gets_one_message_with_a_way_back(client, tenant, role):
    """One message (#36, item 10): what the console is, who may open it, the user's role, and links
    back to the staff UI; not Django's "authenticated as" nor the operator site's note."""
    client.force_login(MembershipFactory(tenant=tenant, role=role).user)
    page = client.get("/manage/", follow=True).content.decode()
    assert page.count('class="errornote"') == 1
    assert "where a firm&#x27;s admins and owners manage" in page and f"is {role}" in page
    assert "platform operator" not in page and "not authorized" not in page
    assert 'href="/cases/"' in page and 'href="/settings/"' in page


def test_a_refused_sign_in_is_one_message_too(client, tenant):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    page = client.post("/manage/login/", {"username": user.username, "password": PASSWORD}).content.decode()
    assert page.count('class="errornote"') == 1 and "Your role in Acme Law LLP is member" in page
    assert 'href="/cases/"' in page
    page = client.post("/manage/login/", {"username": user.username, "password": "wrong"}).content.decode()
    assert page.count('class="errornote"') == 1 and 'href="/cases/"' not in page


def test_user_without_a_firm_is_refused(client, db):
    user = UserFactory()
    response = client.post("/manage/login/", {"username": user.username, "password": PASSWORD})
    assert "not a member of any firm" in response.content.decode()


def test_access_follows_the_active_tenant(client, tenant, other_tenant):
    """Owner of one firm, viewer of another: the console follows the staff UI's tenant switch."""
    user = MembershipFactory(tenant=tenant, role=Role.OWNER).user
    MembershipFactory(tenant=other_tenant, user=user, role=Role.VIEWER)
    client.force_login(user)
    session = client.session
    session[SESSION_TENANT_KEY] = tenant.pk
    session.save()
    assert client.get("/manage/").status_code == 200
    client.post("/tenant/switch", {"tenant": other_tenant.slug})
    assert client.session[SESSION_TENANT_KEY] == other_tenant.pk
    assert client.get("/manage/").status_code == 302


def test_superuser_keeps_the_operator_site(client, db):
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", "root@example.test", "pw-123456")
    client.force_login(root)
    assert client.get("/admin/").status_code == 200


@pytest.mark.parametrize(("role", "linked"), [(Role.OWNER, True), (Role.ADMIN, True), (Role.MEMBER, False)])
def test_the_staff_ui_links_admins_to_the_firm_console(client, tenant, role, linked):
    client.force_login(MembershipFactory(tenant=tenant, role=role).user)
    assert ('href="/manage/"' in client.get("/cases/").content.decode()) is linked


def test_another_firms_object_is_a_readable_not_found_page(console, other_tenant):
    from .conftest import make_audit_row

    row = make_audit_row(other_tenant, "elsewhere")
    response = console.get(f"/manage/rag/auditlog/{row.pk}/change/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "belongs to another firm" in page and 'href="/manage/"' in page
    assert "elsewhere" not in page
