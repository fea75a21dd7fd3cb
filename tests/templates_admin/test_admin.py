"""Django admin: templates listed with their owner, edits versioned like service writes, history
shown, invalid placeholders refused."""

import pytest
from django.contrib.auth import get_user_model

from templates_admin.models import PromptTemplate

pytestmark = pytest.mark.django_db

BALANCED = "legal_analysis_balanced"


@pytest.fixture
def admin_client_(client):
    user = get_user_model().objects.create_superuser("root", "root@example.test", "pw-123456")
    client.force_login(user)
    client.user = user
    return client


def _form(template, **changes):
    fields = {
        name: getattr(template, name)
        for name in (
            "name",
            "description",
            "response_style",
            "citation_style",
            "strictness",
            "follow_up_count",
            "system_prompt",
            "user_prompt",
            "instructions_block",
        )
    }
    return {**fields, "versions-TOTAL_FORMS": 1, "versions-INITIAL_FORMS": 1, **changes}


def test_admin_lists_templates_with_their_owner(admin_client_, tenant, make_template):
    make_template(tenant)
    page = admin_client_.get("/admin/templates_admin/prompttemplate/").content.decode()
    assert BALANCED in page and "built-in" in page and "custom_terse" in page and tenant.name in page
    for owner in ("builtin", "tenant"):
        assert admin_client_.get(f"/admin/templates_admin/prompttemplate/?owner={owner}").status_code == 200


def test_admin_edit_of_a_builtin_is_versioned(admin_client_):
    builtin = PromptTemplate.objects.get(template_id=BALANCED, tenant__isnull=True)
    url = f"/admin/templates_admin/prompttemplate/{builtin.pk}/change/"
    assert admin_client_.get(url).status_code == 200
    response = admin_client_.post(url, _form(builtin, name="Balanced (revised)", confirm_builtin_change="on"))
    assert response.status_code == 302, response.content.decode()[:2000]
    builtin.refresh_from_db()
    assert (builtin.name, builtin.version, builtin.updated_by) == (
        "Balanced (revised)",
        2,
        admin_client_.user,
    )
    assert [v.snapshot["name"] for v in builtin.versions.order_by("version")] == [
        "Legal Analysis - Balanced",
        "Balanced (revised)",
    ]
    history = admin_client_.get(url).content.decode()
    assert "Balanced (revised)" in history


def test_admin_add_creates_version_one(admin_client_, tenant, template_data):
    data = {**template_data, "tenant": tenant.pk, "strictness": "strict", "follow_up_count": 2}
    data.update({"description": "", "versions-TOTAL_FORMS": 0, "versions-INITIAL_FORMS": 0})
    response = admin_client_.post("/admin/templates_admin/prompttemplate/add/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    template = PromptTemplate.objects.get(tenant=tenant, template_id="custom_terse")
    assert template.version == 1 and template.versions.get().version == 1
    assert template.placeholders == ["context", "question", "instructions"]


def test_admin_refuses_invalid_placeholders(admin_client_):
    builtin = PromptTemplate.objects.get(template_id=BALANCED, tenant__isnull=True)
    url = f"/admin/templates_admin/prompttemplate/{builtin.pk}/change/"
    response = admin_client_.post(url, _form(builtin, user_prompt="{context} {question} {secret}"))
    assert response.status_code == 200 and "Unknown placeholder {secret}" in response.content.decode()
    builtin.refresh_from_db()
    assert builtin.version == 1


def test_admin_refuses_a_second_builtin_with_the_same_id(admin_client_, template_data):
    data = {**template_data, "template_id": BALANCED, "strictness": "normal", "follow_up_count": 2}
    data.update({"description": "", "versions-TOTAL_FORMS": 0, "versions-INITIAL_FORMS": 0})
    response = admin_client_.post("/admin/templates_admin/prompttemplate/add/", data)
    assert response.status_code == 200
    assert PromptTemplate.objects.filter(template_id=BALANCED, tenant__isnull=True).count() == 1


def test_admin_edit_of_a_builtin_without_confirmation_saves_nothing(admin_client_):
    builtin = PromptTemplate.objects.get(template_id=BALANCED, tenant__isnull=True)
    url = f"/admin/templates_admin/prompttemplate/{builtin.pk}/change/"
    assert "changes the template for every firm" in admin_client_.get(url).content.decode()
    response = admin_client_.post(url, _form(builtin, name="Balanced (unconfirmed)"))
    assert response.status_code == 200
    assert "Confirm that this changes the built-in" in response.content.decode()
    builtin.refresh_from_db()
    assert (builtin.name, builtin.version, builtin.versions.count()) == ("Legal Analysis - Balanced", 1, 1)


def test_admin_edit_of_a_tenants_template_needs_no_confirmation(admin_client_, tenant, make_template):
    own = make_template(tenant)
    url = f"/admin/templates_admin/prompttemplate/{own.pk}/change/"
    assert "changes the template for every firm" not in admin_client_.get(url).content.decode()
    response = admin_client_.post(url, _form(own, name="Terse (revised)"))
    assert response.status_code == 302, response.content.decode()[:2000]
    own.refresh_from_db()
    assert (own.name, own.version) == ("Terse (revised)", 2)
