"""API key management endpoints: roles, bad input, one-time display, revocation."""

import pytest
from rest_framework.test import APIClient

from tenants.models import ApiKey, Role

pytestmark = pytest.mark.django_db

KEYS = "/api/v1/tenants/api-keys"


def test_admin_creates_a_key_that_is_shown_once_and_works(tenant, make_key_client):
    admin = make_key_client(tenant, Role.ADMIN)
    created = admin.post(KEYS, {"name": "DMS integration", "role": "viewer"}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["key"].startswith(f"lx_{body['prefix']}_") and body["role"] == "viewer"

    listed = admin.get(KEYS).json()
    assert all("key" not in row for row in listed)
    assert body["prefix"] in {row["prefix"] for row in listed}

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {body['key']}")
    assert client.get("/api/v1/tenants/current").json()["role"] == "viewer"

    revoked = admin.delete(f"{KEYS}/{body['id']}")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    assert client.get("/api/v1/tenants/current").status_code == 401


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER])
def test_below_admin_is_forbidden(tenant, make_key_client, role):
    client = make_key_client(tenant, role)
    for response in (client.get(KEYS), client.post(KEYS, {"name": "x"}, format="json")):
        assert response.status_code == 403
        assert response.json()["error_type"] == "PermissionDenied"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "k", "role": "owner"}, "role"),
        ({"name": "k", "role": "god"}, "role"),
    ],
)
def test_bad_input_is_400_with_field_details(tenant, make_key_client, payload, field):
    response = make_key_client(tenant, Role.ADMIN).post(KEYS, payload, format="json")
    assert response.status_code == 400
    assert field in response.json()["details"]


def test_malformed_json_is_400(tenant, make_key_client):
    response = make_key_client(tenant, Role.ADMIN).post(KEYS, "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error_type"] == "ParseError"


def test_revoking_an_unknown_key_is_404(tenant, make_key_client):
    assert make_key_client(tenant, Role.ADMIN).delete(f"{KEYS}/999999").status_code == 404


def test_tenant_id_in_body_must_match_the_credential(tenant, other_tenant, make_key_client):
    admin = make_key_client(tenant, Role.ADMIN)
    refused = admin.post(KEYS, {"name": "k", "tenant_id": "globex-legal"}, format="json")
    assert refused.status_code == 403
    assert "tenant_id" in refused.json()["message"]
    assert not ApiKey.objects.filter(name="k").exists()
    assert admin.post(KEYS, {"name": "k", "tenant_id": "acme-law"}, format="json").status_code == 201
    assert admin.post(KEYS, {"name": "k2", "tenant_id": tenant.pk}, format="json").status_code == 201
