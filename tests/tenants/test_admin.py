"""Django admin: tenants, memberships and API keys; a new key is shown once."""

import re

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tenants.models import ApiKey

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(client):
    user = get_user_model().objects.create_superuser("root", "root@example.test", "pw-123456")
    client.force_login(user)
    return client


def test_admin_lists_tenants_memberships_and_keys(admin_client_, tenant, member):
    for url in (
        "/admin/tenants/tenant/",
        "/admin/tenants/membership/",
        "/admin/tenants/apikey/",
        f"/admin/tenants/tenant/{tenant.pk}/change/",
    ):
        assert admin_client_.get(url).status_code == 200, url


def test_admin_creates_a_key_and_shows_it_once(admin_client_, tenant):
    response = admin_client_.post(
        "/admin/tenants/apikey/add/",
        {"tenant": tenant.pk, "name": "from admin", "role": "member"},
        follow=True,
    )
    assert response.status_code == 200
    page = response.content.decode()
    raw_key = re.search(r"(lx_[a-z0-9]{8}_[A-Za-z0-9_-]+)", page).group(1)
    api_key = ApiKey.objects.get(name="from admin")
    assert raw_key.startswith(f"lx_{api_key.prefix}_")
    assert api_key.hashed_secret not in page

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
    assert client.get("/api/v1/tenants/current").json()["tenant"]["slug"] == tenant.slug

    detail = admin_client_.get(f"/admin/tenants/apikey/{api_key.pk}/change/").content.decode()
    assert raw_key not in detail and f"lx_{api_key.prefix}_…" in detail
    # The message was consumed when shown: no later page repeats it.
    for url in ("/admin/tenants/apikey/", "/admin/"):
        assert raw_key.split("_", 2)[2] not in admin_client_.get(url).content.decode()


def test_an_existing_keys_role_cannot_be_raised_in_the_admin(admin_client_, tenant, make_key_client):
    """A key's role is fixed when it is made (capped at its maker's): editing it here could raise a
    member's key to admin (issue #33, keys follow their people)."""
    client = make_key_client(tenant, role="member")
    key = ApiKey.objects.get(prefix=client.raw_key.split("_")[1])
    response = admin_client_.post(
        f"/admin/tenants/apikey/{key.pk}/change/", {"name": "renamed", "role": "owner"}, follow=True
    )
    assert response.status_code == 200
    key.refresh_from_db()
    assert (key.name, key.role) == ("renamed", "member")
    assert client.get("/api/v1/tenants/current").json()["role"] == "member"


def test_admin_revoke_action(admin_client_, tenant, make_key_client):
    client = make_key_client(tenant)
    key = ApiKey.objects.get(prefix=client.raw_key.split("_")[1])
    admin_client_.post("/admin/tenants/apikey/", {"action": "revoke", "_selected_action": [key.pk]})
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert client.get("/api/v1/tenants/current").status_code == 401


def test_a_new_keys_message_never_travels_in_a_cookie(admin_client_, tenant):
    response = admin_client_.post(
        "/admin/tenants/apikey/add/", {"tenant": tenant.pk, "name": "cookie check", "role": "member"}
    )
    assert response.status_code == 302
    assert "messages" not in response.cookies  # kept in the server-side session instead
    shown = admin_client_.get(response["Location"]).content.decode()
    prefix = ApiKey.objects.get(name="cookie check").prefix
    assert f"lx_{prefix}_" in shown  # still shown once


@pytest.fixture
def staff_client(client, tenant):
    """A staff user (not a superuser) allowed to add and view keys in the operator's admin, and a
    member of `tenant`."""
    from django.contrib.auth.models import Permission

    from tests.factories import MembershipFactory

    user = MembershipFactory(tenant=tenant, role="member").user
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    allowed = ["add_apikey", "view_apikey"]
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="tenants", codename__in=allowed)
    )
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    ("firm", "role", "field", "says"),
    [
        ("own", "admin", "role", "A member credential cannot create a key with the admin role."),
        ("other", "viewer", "tenant", "Only a member of Globex Legal can create its keys."),
    ],
)
def test_a_staff_user_cannot_create_a_key_above_their_role_and_is_told_on_the_form(
    staff_client, tenant, other_tenant, firm, role, field, says
):
    """A staff user who is not a superuser creating a key above their own role (or for a firm they
    are not in) gets a form error on the add page, not a 500 (#33), and no key is made."""
    target = tenant if firm == "own" else other_tenant
    response = staff_client.post(
        "/admin/tenants/apikey/add/", {"tenant": target.pk, "name": "too high", "role": role}
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {field: [says]}
    assert says in response.content.decode()
    assert not ApiKey.objects.filter(name="too high").exists()


def test_a_staff_user_creates_a_key_at_their_own_role(staff_client, tenant):
    response = staff_client.post(
        "/admin/tenants/apikey/add/", {"tenant": tenant.pk, "name": "mine", "role": "member"}
    )
    assert response.status_code == 302
    key = ApiKey.objects.get(name="mine")
    assert (key.tenant, key.role, key.created_via) == (tenant, "member", "operator admin")
