"""The staff UI's read-only Settings page (#21): every member of the firm sees the firm's
configuration (templates, ranking weights, limits, model provider, admins), never another firm's,
and nobody can change anything there."""

from __future__ import annotations

import pytest
from django.test import Client

from rag import services as rag_services
from templates_admin import services as template_services
from tenants.models import Role
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def _template(tenant, template_id: str, name: str):
    return template_services.template_create(
        tenant=tenant,
        data={
            "template_id": template_id,
            "name": name,
            "response_style": "terse",
            "citation_style": "bracketed_ids",
            "strictness": "strict",
            "system_prompt": "You are a careful legal research assistant.",
            "user_prompt": "Context: {context}\n\nQuestion: {question}\n\n{instructions}",
            "instructions_block": "One sentence.",
        },
    )


@pytest.fixture
def configured(tenant, other_tenant):
    """Both firms with their own template, weights, limits and admins."""
    tenant.max_documents, tenant.max_bytes = 123, 5 * 1024 * 1024
    tenant.save()
    _template(tenant, "acme_memo", "Acme Memo Style")
    rag_services.ranking_weights_set(
        tenant=tenant, similarity_weight=0.55, recency_weight=0.35, trust_weight=0.1
    )
    MembershipFactory(tenant=tenant, role=Role.ADMIN, user=UserFactory(username="acme-km"))
    MembershipFactory(tenant=tenant, role=Role.OWNER, user=UserFactory(username="acme-partner"))

    _template(other_tenant, "globex_secret", "Globex Secret Style")
    rag_services.ranking_weights_set(
        tenant=other_tenant, similarity_weight=0.11, recency_weight=0.77, trust_weight=0.12
    )
    MembershipFactory(tenant=other_tenant, role=Role.ADMIN, user=UserFactory(username="globex-boss"))
    return tenant


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER, Role.ADMIN])
def test_every_member_reads_the_firms_settings(configured, login, role):
    page = login(configured, role).get("/settings/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'href="/settings/"' in html  # in the navigation
    # Administrators are pointed at the firm's admin console; others are not.
    assert ('href="/manage/"' in html) == (role == Role.ADMIN)
    # Templates: the firm's own (with its styles) and the built-ins it has not overridden.
    assert "Acme Memo Style" in html and "legal_analysis_balanced" in html
    assert "bracketed_ids" in html and "strict" in html
    # Ranking weights: the firm's own.
    assert "0.55" in html and "0.35" in html
    # Limits: the firm's own, else the platform's.
    assert "123" in html and "5.0\xa0MB" in html
    # The model provider in use, and who can change all this.
    assert "extractive" in html
    assert "acme-km" in html and "acme-partner" in html
    assert "<form" not in html.split("<main>")[1].split("</main>")[0]  # read-only: no form in the page


def test_another_firms_settings_are_never_shown(configured, login):
    page = login(configured, Role.MEMBER).get("/settings/")
    html = page.content.decode()
    assert page.status_code == 200 and "Acme Memo Style" in html
    for secret in ["Globex Secret Style", "globex_secret", "globex-boss", "0.77", "Globex Legal"]:
        assert secret not in html


def test_a_firm_without_its_own_weights_shows_the_platform_defaults(tenant, login):
    html = login(tenant, Role.VIEWER).get("/settings/").content.decode()
    assert "0.7" in html and "platform default" in html


def test_the_settings_page_asks_to_log_in_first():
    response = Client().get("/settings/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER, Role.ADMIN])
def test_a_firm_user_at_the_operator_console_is_sent_to_the_settings_page(tenant, login, role):
    client = login(tenant, role)
    response = client.get("/admin/", follow=True)
    html = response.content.decode()
    assert response.redirect_chain[-1][0].startswith("/admin/login/")
    assert 'id="not-operator"' in html and 'href="/settings/"' in html
    assert client.get("/admin/templates_admin/prompttemplate/").status_code == 302  # still no admin
