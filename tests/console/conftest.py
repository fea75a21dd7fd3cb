"""Two firms, an owner of the first, and one row of each console model per firm."""

from __future__ import annotations

import pytest

from rag.models import AnswerExport, AuditLog, RankingWeights
from rag.services import ranking_weights_set
from templates_admin.models import PromptTemplate
from templates_admin.services import template_create
from tenants.models import ApiKey, Role
from tenants.services import api_key_create
from tests.factories import MembershipFactory

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


def make_answer_export(tenant, marker: str) -> AnswerExport:
    return AnswerExport.objects.create(
        tenant=tenant, format="docx", request_ids=[f"req-{marker}"], conversation_id=f"conv-{marker}"
    )


def make_ranking_weights(tenant, marker: str) -> RankingWeights:
    # The row has no text of its own: the marker is the name of the user who tuned it.
    return ranking_weights_set(
        tenant=tenant,
        similarity_weight=0.5,
        recency_weight=0.3,
        trust_weight=0.2,
        updated_by=MembershipFactory(tenant=tenant, user__username=marker).user,
    )


# One maker per model registered on the tenant site: the sweep test refuses a model without one,
# so a model admin added later cannot escape it.
MAKERS = {
    AuditLog: make_audit_row,
    PromptTemplate: make_template,
    ApiKey: make_api_key,
    AnswerExport: make_answer_export,
    RankingWeights: make_ranking_weights,
}

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


@pytest.fixture
def firm_admin(tenant):
    """An owner of `tenant` (not platform staff)."""
    return MembershipFactory(tenant=tenant, role=Role.OWNER).user


@pytest.fixture
def console(client, firm_admin):
    """A test client logged in as the firm's owner."""
    client.force_login(firm_admin)
    return client
