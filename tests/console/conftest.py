"""Two firms, an owner of the first, and one row of each console model per firm."""

from __future__ import annotations

import pytest

from rag.ingest.service import DocumentFields, document_upload
from rag.models import AnswerExport, AuditLog, Case, Document, RankingWeights
from rag.services import case_create, ranking_weights_set
from templates_admin.models import PromptTemplate
from templates_admin.services import template_create
from tenants.invitations import invitation_create
from tenants.models import ApiKey, Invitation, Membership, Role
from tenants.services import api_key_create
from tests.factories import MembershipFactory, UserFactory
from tests.rag.conftest import _media_in_tmp  # noqa: F401  (autouse: stored files go to a tmp dir)

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
    return api_key_create(tenant=tenant, name=f"key {marker}", role=Role.MEMBER, created_via="test")[0]


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


def make_case(tenant, marker: str) -> Case:
    return case_create(tenant=tenant, name=f"Case {marker}", client=f"Client {marker}")


def make_document(tenant, marker: str) -> Document:
    """A stored, queued document (not ingested) in a case of its own, all named by `marker`."""
    case = make_case(tenant, f"{marker} docs")
    content = f"The {marker} agreement.".encode()
    fields = DocumentFields(title=f"Doc {marker}")
    return document_upload(
        tenant=tenant, case=case, filename=f"{marker}.txt", content=content, fields=fields, enqueue=False
    ).document


def make_membership(tenant, marker: str) -> Membership:
    return MembershipFactory(tenant=tenant, user=UserFactory(username=f"user-{marker}"), role=Role.MEMBER)


def make_invitation(tenant, marker: str) -> Invitation:
    inviter = MembershipFactory(tenant=tenant, role=Role.OWNER).user
    return invitation_create(
        tenant=tenant, identifier=f"{marker}@example.test", role=Role.MEMBER, invited_by=inviter
    )


# One maker per model registered on the tenant site: the sweep test refuses a model without one,
# so a model admin added later cannot escape it.
MAKERS = {
    AuditLog: make_audit_row,
    PromptTemplate: make_template,
    ApiKey: make_api_key,
    AnswerExport: make_answer_export,
    RankingWeights: make_ranking_weights,
    Case: make_case,
    Document: make_document,
    Membership: make_membership,
    Invitation: make_invitation,
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
    Case: {"name": "Forged case", "client": "", "description": ""},
}
# Members join by accepting an invitation: the Members list has no add form of its own.
ADD_DATA[Invitation] = {"identifier": "invitee@example.test", "role": "member"}


@pytest.fixture
def firm_admin(tenant):
    """An owner of `tenant` (not platform staff)."""
    return MembershipFactory(tenant=tenant, role=Role.OWNER).user


@pytest.fixture
def console(client, firm_admin):
    """A test client logged in as the firm's owner."""
    client.force_login(firm_admin)
    return client
