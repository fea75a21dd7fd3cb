"""POST /admin/simulate: the dry run shows the prompt and passages without calling the model, takes
the query options (refusing unknown ones), stays within the tenant, and is for admins only."""

from __future__ import annotations

import pytest

from rag.llm.base import configured_model
from rag.models import AuditLog
from tenants.models import Role
from tests.api.conftest_admin import ROLES_BELOW_ADMIN, ingest_for_tenant

__all__ = ["ingest_for_tenant"]  # fixtures, imported for pytest

pytestmark = pytest.mark.django_db

SIMULATE = "/api/v1/rag/admin/simulate"
QUESTION = "How much notice is needed to terminate the agreement?"
MSA = (
    "MASTER SERVICES AGREEMENT between Acme Robotics Corp and Globex Logistics Inc.\n\n"
    "1. Services. Globex shall deliver the logistics services described in Schedule A.\n\n"
    "Section 10.2 Termination. Either party may terminate this Agreement on ninety (90) days written "
    "notice to the other party.\n\n"
    "12. Governing Law. This Agreement shall be governed by the laws of the State of Delaware."
)
OTHER_MSA = (
    "SUPPLY AGREEMENT between Globex Legal Client and Hooli.\n\n"
    "9. Termination. Either party may terminate this Agreement on fifteen (15) days notice.\n\n"
    "10. Governing Law. This Agreement is governed by the laws of California."
)


@pytest.fixture
def corpus(tenant, other_tenant, ingest_for_tenant):
    return {
        "msa": ingest_for_tenant(tenant, MSA, title="Acme Globex MSA", filename="msa.txt"),
        "other": ingest_for_tenant(
            other_tenant, OTHER_MSA, title="Globex Hooli supply", filename="supply.txt"
        ),
    }


def test_the_spec_example_shows_prompt_snippets_tokens_and_model(admin_client, corpus, tenant):
    body = {
        "query": QUESTION,
        "template_id": "legal_analysis_balanced",
        "top_k": 3,
        "show_prompt": True,
        "show_context": True,
    }
    response = admin_client.post(SIMULATE, body, format="json")
    assert response.status_code == 200, response.json()
    result = response.json()
    assert result["dry_run"] is True
    assert QUESTION in result["generated_prompt_detail"]["user"]
    assert "ninety (90) days" in result["generated_prompt_detail"]["user"]
    assert result["generated_prompt_detail"]["system"]
    # The spec's types: the prompt and the model are strings, the mitigation one value or null; the
    # detail is beside them.
    detail = result["generated_prompt_detail"]
    assert result["generated_prompt"] == f"{detail['system']}\n\n{detail['user']}"
    assert result["flags"]["mitigation_applied"] is None and result["flags"]["mitigations_applied"] == []
    snippets = result["selected_snippets"]
    assert 1 <= len(snippets) <= 3
    assert {snippet["document_id"] for snippet in snippets} == {corpus["msa"].pk}
    assert result["estimated_tokens"] > result["context_tokens"] > 0
    provider, model = configured_model()
    assert result["would_use_model"] == model  # the spec's string
    assert result["would_use_model_detail"] == {"provider": provider, "model": model}
    assert result["provenance"]["template_id"] == "legal_analysis_balanced"
    assert result["provenance"]["model_calls"] == 0 and result["provenance"]["tokens_used"] == 0

    # Audited as a dry run of this key; the response is the pipeline's result, field for field.
    row = AuditLog.objects.get(tenant=tenant, request_id=result["request_id"])
    assert row.status == "dry_run" and row.user is None
    assert row.api_key_prefix and admin_client.raw_key.startswith(f"lx_{row.api_key_prefix}_")
    assert row.options == {"template_id": "legal_analysis_balanced", "top_k": 3, "dry_run": True}
    assert result == row.result


def test_options_reach_the_pipeline(admin_client, corpus):
    body = {"query": QUESTION, "top_k": 1, "citation_style": "bracketed_ids", "strictness": "strict"}
    result = admin_client.post(SIMULATE, body, format="json").json()
    assert [s["citation_id"] for s in result["selected_snippets"]] == [f"doc_{corpus['msa'].pk}"]
    assert result["provenance"]["citation_style"] == "bracketed_ids"
    assert result["provenance"]["strictness"] == "strict"


def test_show_prompt_and_show_context_false_leave_them_out(admin_client, corpus):
    body = {"query": QUESTION, "show_prompt": False, "show_context": False}
    result = admin_client.post(SIMULATE, body, format="json").json()
    assert result["generated_prompt"] is None and result["generated_prompt_detail"] is None
    assert result["selected_snippets"] is None
    assert result["estimated_tokens"] > 0


def test_a_simulation_never_shows_another_tenants_documents(admin_client, other_admin_client, corpus):
    body = {"query": "What notice does the Globex Hooli supply agreement require?", "top_k": 10}
    mine = admin_client.post(SIMULATE, body, format="json").json()
    assert corpus["other"].pk not in {s["document_id"] for s in mine["selected_snippets"]}
    assert "fifteen" not in mine["generated_prompt_detail"]["user"]
    theirs = other_admin_client.post(SIMULATE, body, format="json").json()
    assert {s["document_id"] for s in theirs["selected_snippets"]} == {corpus["other"].pk}


def test_an_admin_simulation_reads_confidential_text(admin_client, tenant, ingest_for_tenant):
    """The reader is the caller's role: an admin sees confidential passages unredacted."""
    ingest_for_tenant(tenant, MSA, title="Confidential MSA", sensitivity="confidential")
    result = admin_client.post(SIMULATE, {"query": QUESTION}, format="json").json()
    assert result["selected_snippets"] and "Confidential MSA" in {
        s["title"] for s in result["selected_snippets"]
    }
    assert result["flags"]["redactions_applied"] is False


def test_a_simulation_uses_the_tenants_own_template(admin_client, corpus):
    created = admin_client.post(
        "/api/v1/rag/admin/templates",
        {
            "template_id": "house_style",
            "name": "House style",
            "system_prompt": "HOUSE SYSTEM PROMPT",
            "user_prompt": "Q: {question}\nSOURCES:\n{context}",
        },
        format="json",
    )
    assert created.status_code == 201
    result = admin_client.post(
        SIMULATE, {"query": QUESTION, "template_id": "house_style"}, format="json"
    ).json()
    assert result["generated_prompt_detail"]["system"].startswith("HOUSE SYSTEM PROMPT")
    assert result["generated_prompt_detail"]["user"].startswith(f"Q: {QUESTION}")


def test_an_empty_corpus_still_simulates(admin_client):
    response = admin_client.post(SIMULATE, {"query": QUESTION}, format="json")
    assert response.status_code == 200
    assert response.json()["selected_snippets"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": QUESTION, "topk": 3}, "topk"),
        ({"query": QUESTION, "top_k": 0}, "top_k"),
        ({"query": QUESTION, "top_k": "3"}, "top_k"),
        ({"query": QUESTION, "citation_style": "footnotes"}, "citation_style"),
        ({"query": QUESTION, "token_budget": 10}, "token_budget"),
        ({"query": QUESTION, "filters": {"bogus": 1}}, "filters.bogus"),
        ({"query": QUESTION, "filters": ["act"]}, "filters"),
        ({"query": QUESTION, "mode": "async"}, "mode"),
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": 42}, "query"),
        ({"query": QUESTION, "show_prompt": "yes"}, "show_prompt"),
        ({"query": QUESTION, "show_context": None}, "show_context"),
        ({"query": QUESTION, "dry_run": "false"}, "dry_run"),
        # run_query's own arguments are not options: they would impersonate the caller.
        ({"query": QUESTION, "reader": {"role": "owner"}}, "reader"),
        ({"query": QUESTION, "user_id": 1}, "user_id"),
        ({"query": QUESTION, "request_id": "req_forged"}, "request_id"),
        ({"query": QUESTION, "executor": None}, "executor"),
        ({"query": QUESTION, "question": "another"}, "question"),
    ],
)
def test_bad_input_is_400_with_field_details(admin_client, body, field):
    response = admin_client.post(SIMULATE, body, format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json()["details"]


def test_a_body_that_is_not_an_object_is_400(admin_client):
    response = admin_client.post(SIMULATE, [QUESTION], format="json")
    assert response.status_code == 400


def test_another_tenants_or_an_unknown_template_is_404(admin_client, other_admin_client):
    created = other_admin_client.post(
        "/api/v1/rag/admin/templates",
        {
            "template_id": "globex_private",
            "name": "Secret",
            "system_prompt": "s",
            "user_prompt": "{context} {question}",
        },
        format="json",
    )
    assert created.status_code == 201
    for template_id in ("globex_private", "no_such_template"):
        response = admin_client.post(SIMULATE, {"query": QUESTION, "template_id": template_id}, format="json")
        assert response.status_code == 404
        assert response.json()["error_type"] == "NotFound"


def test_a_body_for_another_tenant_is_refused(admin_client, other_tenant):
    response = admin_client.post(SIMULATE, {"query": QUESTION, "tenant_id": other_tenant.slug}, format="json")
    assert response.status_code == 403
    assert not AuditLog.objects.exists()


def test_a_body_naming_the_own_tenant_is_fine(admin_client, tenant):
    response = admin_client.post(SIMULATE, {"query": QUESTION, "tenant_id": tenant.slug}, format="json")
    assert response.status_code == 200


@pytest.mark.parametrize("role", ROLES_BELOW_ADMIN)
def test_below_admin_is_forbidden(tenant, make_key_client, role):
    response = make_key_client(tenant, role).post(SIMULATE, {"query": QUESTION}, format="json")
    assert response.status_code == 403 and response.json()["error_type"] == "PermissionDenied"
    assert not AuditLog.objects.exists()


def test_an_owner_may_simulate(tenant, make_key_client):
    response = make_key_client(tenant, Role.OWNER).post(SIMULATE, {"query": QUESTION}, format="json")
    assert response.status_code == 200
