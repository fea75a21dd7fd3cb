"""`Authorization: Api-Key …`: valid, revoked, malformed, wrong secret, another tenant's key."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tenants import services
from tenants.models import ApiKey, Role

pytestmark = pytest.mark.django_db

CURRENT = "/api/v1/tenants/current"


def test_valid_key_acts_for_its_tenant_and_role(tenant, make_key_client):
    client = make_key_client(tenant, Role.VIEWER)
    response = client.get(CURRENT)
    assert response.status_code == 200
    assert response.json() == {
        "tenant": {"slug": "acme-law", "name": "Acme Law LLP"},
        "role": "viewer",
        "via": "api_key",
    }


def test_use_is_recorded(tenant, make_key_client):
    client = make_key_client(tenant)
    client.get(CURRENT)
    prefix = client.raw_key.split("_")[1]
    assert ApiKey.objects.get(prefix=prefix).last_used_at is not None


def test_last_used_is_written_at_most_once_per_resolution(tenant, make_key_client, settings):
    settings.API_KEY_LAST_USED_RESOLUTION_SECONDS = 60
    client = make_key_client(tenant)
    prefix = client.raw_key.split("_")[1]
    recent = timezone.now() - timedelta(seconds=5)
    ApiKey.objects.filter(prefix=prefix).update(last_used_at=recent)
    client.get(CURRENT)
    assert ApiKey.objects.get(prefix=prefix).last_used_at == recent
    stale = timezone.now() - timedelta(minutes=5)
    ApiKey.objects.filter(prefix=prefix).update(last_used_at=stale)
    client.get(CURRENT)
    assert ApiKey.objects.get(prefix=prefix).last_used_at > stale


def test_revoked_key_is_refused(tenant, make_key_client):
    client = make_key_client(tenant, Role.ADMIN)
    key = ApiKey.objects.get(prefix=client.raw_key.split("_")[1])
    services.api_key_revoke(tenant=tenant, key_id=key.pk)
    response = client.get(CURRENT)
    assert response.status_code == 401
    assert response.json()["error_type"] == "AuthenticationFailed"
    assert response["WWW-Authenticate"].startswith("Api-Key")


def test_key_of_a_deactivated_tenant_is_refused(tenant, make_key_client):
    client = make_key_client(tenant)
    tenant.is_active = False
    tenant.save()
    assert client.get(CURRENT).status_code == 401


@pytest.mark.parametrize(
    "header",
    [
        "Api-Key ",
        "Api-Key garbage",
        "Api-Key lx_short_secret",
        "Api-Key xx_abcdefgh_secret",
        "Api-Key lx_abcdefgh_",
        "Api-Key lx_abcdefgh_notthesecret",
        "Api-Key lx_\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9_x",
    ],
)
def test_malformed_or_unknown_keys_are_refused(api_client, tenant, header):
    services.api_key_create(tenant=tenant, name="real", created_via="test")
    api_client.credentials(HTTP_AUTHORIZATION=header)
    response = api_client.get(CURRENT)
    assert response.status_code == 401
    assert set(response.json()) == {"error_type", "message", "request_id", "details"}


def test_right_prefix_wrong_secret_is_refused(api_client, tenant):
    _, raw_key = services.api_key_create(tenant=tenant, name="real", created_via="test")
    api_client.credentials(HTTP_AUTHORIZATION=raw_key[:-4].join(["Api-Key ", "AAAA"]))
    assert api_client.get(CURRENT).status_code == 401


def test_no_credentials_is_401(api_client, tenant):
    response = api_client.get(CURRENT)
    assert response.status_code == 401
    assert response.json()["error_type"] == "NotAuthenticated"


def test_another_tenants_key_sees_only_its_own_tenant(tenant, other_tenant, make_key_client):
    theirs = make_key_client(other_tenant, Role.ADMIN)
    assert theirs.get(CURRENT).json()["tenant"]["slug"] == "globex-legal"
    mine, _ = services.api_key_create(tenant=tenant, name="acme internal", created_via="test")
    listing = theirs.get("/api/v1/tenants/api-keys").json()
    assert "acme internal" not in {k["name"] for k in listing}
    # Revoking a key of another tenant is a 404, and the key keeps working.
    response = theirs.delete(f"/api/v1/tenants/api-keys/{mine.pk}")
    assert response.status_code == 404
    assert response.json()["error_type"] == "NotFound"
    mine.refresh_from_db()
    assert mine.revoked_at is None


def test_memberships_of_a_key_is_its_one_tenant(tenant, make_key_client):
    response = make_key_client(tenant, Role.VIEWER).get("/api/v1/tenants/memberships")
    assert response.json() == [{"tenant": {"slug": "acme-law", "name": "Acme Law LLP"}, "role": "viewer"}]


def test_a_key_cannot_switch_tenant(tenant, other_tenant, make_key_client):
    response = make_key_client(tenant).post(
        "/api/v1/tenants/switch", {"tenant": "globex-legal"}, format="json"
    )
    assert response.status_code == 403  # an API key is bound to its tenant
