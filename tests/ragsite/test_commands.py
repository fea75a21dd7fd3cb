"""Management commands: demo_setup (idempotent, working credentials) and db status."""

import json
import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from tenants.models import ApiKey, Membership, Role, Tenant


def _demo(settings, tmp_path) -> str:
    settings.VAR_DIR = tmp_path
    out = StringIO()
    call_command("demo_setup", stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_demo_setup_prints_working_credentials_and_is_idempotent(settings, tmp_path):
    first = _demo(settings, tmp_path)
    password = re.search(r"password: (\S+)", first).group(1)
    api_key = re.search(r"API key\s+(\S+)", first).group(1)
    assert "http://127.0.0.1:8000/admin/" in first

    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password)
    tenant = Tenant.objects.get(slug="demo-law-firm")
    assert Membership.objects.get(tenant=tenant, user=admin).role == Role.OWNER
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key}")
    assert client.get("/api/v1/tenants/current").json()["tenant"]["slug"] == "demo-law-firm"

    second = _demo(settings, tmp_path)
    assert re.search(r"password: (\S+)", second).group(1) == password
    assert re.search(r"API key\s+(\S+)", second).group(1) == api_key
    assert Tenant.objects.filter(slug="demo-law-firm").count() == 1
    assert ApiKey.objects.filter(tenant=tenant, revoked_at=None).count() == 1
    saved = json.loads((tmp_path / "demo-credentials.json").read_text())
    assert saved == {"password": password, "api_key": api_key}
    assert (tmp_path / "demo-credentials.json").stat().st_mode & 0o077 == 0


@pytest.mark.django_db
def test_demo_setup_replaces_a_revoked_key(settings, tmp_path):
    old_key = re.search(r"API key\s+(\S+)", _demo(settings, tmp_path)).group(1)
    ApiKey.objects.update(revoked_at="2026-01-01T00:00Z")
    new_key = re.search(r"API key\s+(\S+)", _demo(settings, tmp_path)).group(1)
    assert new_key != old_key


def test_db_status_reports_the_running_embedded_server(settings, db):
    if settings.DATABASE_URL:
        pytest.skip("DATABASE_URL is set: no embedded server")
    out = StringIO()
    call_command("db", "status", stdout=out)
    assert out.getvalue().startswith("running (pid ")
