"""The console's model admins: audit log (filters, CSV of the filtered rows, readable question),
prompt templates (CRUD versioned, built-ins read-only, "customise"), API keys (shown once, revoke)."""

from __future__ import annotations

import csv
import io
import re

import pytest

from rag.models import AuditLog
from templates_admin.models import PromptTemplate, PromptTemplateVersion
from tenants.models import ApiKey
from tenants.services import api_key_authenticate

from .conftest import ADD_DATA, OTHER_MARKER, make_audit_row, make_template

pytestmark = pytest.mark.django_db
AUDIT = "/manage/rag/auditlog/"
TEMPLATES = "/manage/templates_admin/prompttemplate/"
KEYS = "/manage/tenants/apikey/"


def _csv_rows(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


# --- Audit log ---------------------------------------------------------------------------------


def test_audit_csv_exports_the_filtered_rows_of_the_firm_only(console, tenant, other_tenant):
    answered = make_audit_row(tenant, "answeredone")
    failed = AuditLog.objects.create(
        tenant=tenant, request_id="req-failed", query="q?", status="failed", latency_ms=1.0
    )
    make_audit_row(other_tenant, OTHER_MARKER)
    page = console.get(AUDIT, {"status": "failed"})
    assert [row.pk for row in page.context["cl"].result_list] == [failed.pk]
    assert "/manage/rag/auditlog/export/?status=failed" in page.content.decode()
    rows = _csv_rows(console.get(AUDIT + "export/", {"status": "failed"}))
    assert [row["request_id"] for row in rows] == ["req-failed"]
    everything = _csv_rows(console.get(AUDIT + "export/"))
    assert {row["request_id"] for row in everything} == {answered.request_id, "req-failed"}


def test_audit_filters_by_status_date_and_template(console, tenant):
    make_audit_row(tenant, "one")
    filters = console.get(AUDIT).context["cl"].filter_specs
    assert {spec.title for spec in filters} >= {"status", "created at", "template id"}
    assert console.get(AUDIT, {"template_id": "tpl-one"}).context["cl"].result_count == 1
    assert console.get(AUDIT, {"template_id": "tpl-none"}).context["cl"].result_count == 0


def test_audit_list_truncates_the_question_and_the_detail_has_it_in_full(console, tenant):
    long_question = "Does the indemnity clause survive termination? " * 10
    row = AuditLog.objects.create(
        tenant=tenant, request_id="req-long", query=long_question, status="answered", latency_ms=1.0
    )
    listing = console.get(AUDIT).content.decode()
    assert (
        long_question.strip() not in listing and "Does the indemnity clause survive termination?" in listing
    )
    detail = console.get(f"{AUDIT}{row.pk}/change/").content.decode()
    assert long_question.strip() in detail


def test_audit_rows_cannot_be_added_changed_or_deleted(console, tenant):
    row = make_audit_row(tenant, "readonly")
    assert console.get(AUDIT + "add/").status_code == 403
    assert console.post(f"{AUDIT}{row.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AuditLog.objects.filter(pk=row.pk).exists()


# --- Prompt templates ---------------------------------------------------------------------------


def test_firm_template_crud_is_versioned(console, tenant):
    assert console.post(TEMPLATES + "add/", ADD_DATA[PromptTemplate]).status_code == 302
    template = PromptTemplate.objects.get(tenant=tenant, template_id="tpl-forged")
    assert template.version == 1 and template.versions.count() == 1
    changed = {**ADD_DATA[PromptTemplate], "name": "Renamed"}
    assert console.post(f"{TEMPLATES}{template.pk}/change/", changed).status_code == 302
    template.refresh_from_db()
    assert (template.name, template.version, template.versions.count()) == ("Renamed", 2, 2)
    assert console.post(f"{TEMPLATES}{template.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not PromptTemplate.objects.filter(pk=template.pk).exists()


def test_duplicate_template_id_is_a_form_error(console, tenant):
    make_template(tenant, "dup")
    response = console.post(TEMPLATES + "add/", {**ADD_DATA[PromptTemplate], "template_id": "tpl-dup"})
    assert response.status_code == 200
    assert "already has a template with this id" in response.content.decode()


def test_builtins_are_read_only_and_customise_makes_the_firms_copy(console, tenant):
    builtin = PromptTemplate.objects.filter(tenant__isnull=True).order_by("template_id").first()
    before = builtin.snapshot(), builtin.version
    listed = {row.pk for row in console.get(TEMPLATES).context["cl"].result_list}
    assert builtin.pk in listed
    assert console.post(f"{TEMPLATES}{builtin.pk}/change/", {**ADD_DATA[PromptTemplate]}).status_code == 403
    assert console.post(f"{TEMPLATES}{builtin.pk}/delete/", {"post": "yes"}).status_code == 403
    response = console.post(TEMPLATES, {"action": "customise", "_selected_action": [builtin.pk], "index": 0})
    assert response.status_code == 302
    copy = PromptTemplate.objects.get(tenant=tenant, template_id=builtin.template_id)
    assert copy.system_prompt == builtin.system_prompt and copy.version == 1
    builtin.refresh_from_db()
    assert (builtin.snapshot(), builtin.version) == before
    listed = {row.pk for row in console.get(TEMPLATES).context["cl"].result_list}
    assert copy.pk in listed and builtin.pk not in listed  # the copy now shadows the built-in
    assert PromptTemplateVersion.objects.filter(template=copy).count() == 1


# --- API keys -----------------------------------------------------------------------------------


def test_new_key_is_shown_once_and_authenticates_for_the_firm(console, tenant):
    response = console.post(KEYS + "add/", {"name": "billing export", "role": "viewer"}, follow=True)
    raw_key = re.search(r"(lx_[a-z0-9]{8}_[A-Za-z0-9_-]+)", response.content.decode()).group(1)
    credential = api_key_authenticate(raw_key=raw_key)
    assert (credential.tenant, credential.role) == (tenant, "viewer")
    assert raw_key not in console.get(KEYS).content.decode()
    key = ApiKey.objects.get(name="billing export")
    assert raw_key not in console.get(f"{KEYS}{key.pk}/change/").content.decode()


def test_owner_role_is_not_offered_for_a_key(console):
    response = console.post(KEYS + "add/", {"name": "too strong", "role": "owner"})
    assert response.status_code == 200 and not ApiKey.objects.filter(name="too strong").exists()


def test_revoke_action_revokes_the_firms_key(console, tenant):
    console.post(KEYS + "add/", {"name": "to revoke", "role": "member"})
    key = ApiKey.objects.get(name="to revoke")
    console.post(KEYS, {"action": "revoke", "_selected_action": [key.pk], "index": 0})
    key.refresh_from_db()
    assert key.revoked_at is not None
