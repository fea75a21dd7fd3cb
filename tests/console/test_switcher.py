"""The firm switcher in the console's header: it lists the user's firms with their role, and a
switch lands where the new firm's data can be shown (never on the previous firm's object)."""

from __future__ import annotations

import pytest

from rag.models import AuditLog
from tenants.models import Role
from tenants.services import SESSION_TENANT_KEY
from tests.factories import MembershipFactory

from .conftest import make_audit_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_of_two(client, tenant, other_tenant):
    """Owner of `tenant`, admin of `other_tenant`; the session acts for `tenant`."""
    user = MembershipFactory(tenant=tenant, role=Role.OWNER).user
    MembershipFactory(tenant=other_tenant, user=user, role=Role.ADMIN)
    client.force_login(user)
    session = client.session
    session[SESSION_TENANT_KEY] = tenant.pk
    session.save()
    return user


def _header(client, url="/manage/") -> str:
    page = client.get(url).content.decode()
    return page[page.index('<div id="user-tools">') : page.index("</header>")]


def test_header_names_the_firm_and_offers_the_others(client, tenant, other_tenant, owner_of_two):
    header = _header(client)
    assert f"{tenant.name} (owner)" in header and f"{other_tenant.name} (admin)" in header
    assert 'href="/"' in header or "Back to Lexrag" in header
    assert tenant.name in client.get("/manage/").content.decode().split('id="site-name"')[1][:300]


def test_a_single_firm_gets_no_switcher(console):
    assert "console-firm-switch" not in _header(console)


def test_switching_on_a_list_stays_on_the_list(client, other_tenant, owner_of_two):
    response = client.post(
        "/tenant/switch", {"tenant": other_tenant.slug, "next": "/manage/rag/auditlog/?status=answered"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/manage/rag/auditlog/?status=answered"
    assert client.session[SESSION_TENANT_KEY] == other_tenant.pk


def test_switching_on_an_object_lands_on_its_list(client, tenant, other_tenant, owner_of_two):
    row = make_audit_row(tenant, "switchmarker")
    url = f"/manage/rag/auditlog/{row.pk}/change/"
    assert client.get(url).status_code == 200
    response = client.post("/tenant/switch", {"tenant": other_tenant.slug, "next": url})
    assert response["Location"] == "/manage/rag/auditlog/"
    assert client.get(url).status_code == 404  # the previous firm's row is not this firm's
    assert AuditLog.objects.filter(pk=row.pk).exists()


def test_switching_to_a_firm_without_console_lands_on_its_settings(client, tenant, other_tenant):
    user = MembershipFactory(tenant=tenant, role=Role.ADMIN).user
    MembershipFactory(tenant=other_tenant, user=user, role=Role.MEMBER)
    client.force_login(user)
    session = client.session
    session[SESSION_TENANT_KEY] = tenant.pk
    session.save()
    response = client.post("/tenant/switch", {"tenant": other_tenant.slug, "next": "/manage/rag/auditlog/"})
    assert response["Location"] == "/settings/"


def test_a_firm_the_user_is_not_in_is_not_found(client, other_tenant, console):
    response = console.post("/tenant/switch", {"tenant": other_tenant.slug, "next": "/manage/"})
    assert response.status_code == 404


def test_the_operator_site_has_no_firm_switcher(client, db):
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", "root@example.test", "pw-123456")
    client.force_login(root)
    page = client.get("/admin/").content.decode()
    assert "console-firm-switch" not in page and "Back to Lexrag" not in page
    assert "View site" in page
