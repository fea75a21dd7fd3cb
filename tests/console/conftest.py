"""Two firms, an owner of the first, and one row of each console model per firm."""

from __future__ import annotations

import pytest

from rag.models import AuditLog
from templates_admin.models import PromptTemplate
from templates_admin.services import template_create
from tenants.models import ApiKey, Membership, Role
from tenants.services import api_key_create
from tests.factories import MembershipFactory, UserFactory

# Text that only the other firm's rows contain: no page of the first firm may show it.
OTHER_MARKER = "globexsecretmarker"
OWN_MARKER = "acmeownmarker"


def make_audit_row(tenant, marker: str) -> AuditLog:
    return AuditLog.objects.create(
        tenant=tenant,
        request_id=f"req-{marker}",
        query=f"What does the {marker} clause say?",
        template_id=f"tpl-{marker}",
        status="answered",
        latency_ms=12.0,
    )


def make_template(tenant, marker: str) -> PromptTemplate:
    return template_create(
        tenant=tenant,
        data={
            "template_id": f"tpl-{marker}",
            "name": f"Template {marker}",
            "system_prompt": "You are a careful legal assistant.",
            "user_prompt": "{context}\n\nQuestion: {question}",
        },
    )


def make_api_key(tenant, marker: str) -> ApiKey:
    return api_key_create(tenant=tenant, name=f"key {marker}", role=Role.MEMBER)[0]


def make_membership(tenant, marker: str) -> Membership:
    return MembershipFactory(tenant=tenant, user=UserFactory(username=f"user-{marker}"), role=Role.MEMBER)


# One maker per model registered on the tenant site: the sweep test refuses a model without one,
# so a model admin added later cannot escape it.
MAKERS = {AuditLog: make_audit_row, PromptTemplate: make_template, ApiKey: make_api_key}
MAKERS[Membership] = make_membership

# Valid add-form data per model (the sweep adds a forged `tenant` to it).
ADD_DATA = {
    PromptTemplate: {
        "template_id": "tpl-forged",
        "name": "Forged",
        "response_style": "balanced",
        "citation_style": "inline_numbers",
        "strictness": "normal",
        "follow_up_count": "2",
        "system_prompt": "Be careful.",
        "user_prompt": "{context} {question}",
        "instructions_block": "",
        "description": "",
        "versions-TOTAL_FORMS": "0",
        "versions-INITIAL_FORMS": "0",
    },
    ApiKey: {"name": "forged key", "role": "member"},
}
ADD_DATA[Membership] = {"identifier": "invitee@example.test", "role": "member"}


@pytest.fixture
def firm_admin(tenant):
    """An owner of `tenant` (not platform staff)."""
    return MembershipFactory(tenant=tenant, role=Role.OWNER).user


@pytest.fixture
def console(client, firm_admin):
    """A test client logged in as the firm's owner."""
    client.force_login(firm_admin)
    return client
