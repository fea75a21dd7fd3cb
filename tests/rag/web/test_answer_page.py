"""/ask/<request_id>/: a stored answer with its conversation, for its asker or a firm admin."""

from __future__ import annotations

import json

import pytest

from rag.models import AuditLog
from tenants.models import Role
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


def _row(tenant, user, request_id, query, conversation_id="", status="answered"):
    return AuditLog.objects.create(
        tenant=tenant,
        user=user,
        request_id=request_id,
        conversation_id=conversation_id,
        query=query,
        status=status,
        latency_ms=10.0,
        options={"top_k": 3},
        result={"request_id": request_id, "answer": f"Answer to {query}", "citations": []},
    )


def _thread(response) -> dict:
    html = response.content.decode()
    start = html.index('<script id="thread-data" type="application/json">') + len(
        '<script id="thread-data" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])


@pytest.fixture
def conversation(tenant, login):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    rows = [
        _row(tenant, user, f"req_turn{n}", question, "conv_a")
        for n, question in enumerate(["Which law governs?", "Does it survive termination?", "Who pays?"])
    ]
    _row(tenant, user, "req_elsewhere", "Another thread", "conv_b")
    return user, rows


def test_the_asker_sees_the_thread_up_to_the_answer_and_may_continue(client, conversation):
    user, _ = conversation
    client.force_login(user)
    response = client.get("/ask/req_turn1/")
    assert response.status_code == 200
    thread = _thread(response)
    questions = [turn["query"] for turn in thread["turns"]]
    assert questions == ["Which law governs?", "Does it survive termination?"]
    assert thread["own"] is True and thread["conversation_id"] == "conv_a"
    assert thread["turns"][-1]["options"] == {"top_k": 3} and thread["turns"][-1]["asked_by"] is None


def test_a_firm_admin_reads_a_members_answer_but_does_not_continue_their_thread(client, tenant, conversation):
    user, _ = conversation
    client.force_login(MembershipFactory(tenant=tenant, role=Role.ADMIN).user)
    thread = _thread(client.get("/ask/req_turn2/"))
    assert len(thread["turns"]) == 3 and thread["own"] is False and thread["conversation_id"] == ""
    assert thread["turns"][-1]["asked_by"] == user.username


def test_another_member_and_dry_runs_are_not_found(client, tenant, conversation):
    user, _ = conversation
    client.force_login(MembershipFactory(tenant=tenant, role=Role.MEMBER).user)
    assert client.get("/ask/req_turn0/").status_code == 404
    _row(tenant, user, "req_dry", "Simulated", status="dry_run")
    client.force_login(user)
    assert client.get("/ask/req_dry/").status_code == 404


def test_the_document_page_links_back_only_to_an_answer_the_user_may_open(
    client, tenant, conversation, case, upload
):
    user, _ = conversation
    document = upload(case, "contract.txt").document
    client.force_login(user)
    page = client.get(f"/documents/{document.pk}/", {"answer": "req_turn0"}).content.decode()
    assert 'href="/ask/req_turn0/"' in page and "Back to the answer" in page
    stranger = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    client.force_login(stranger)
    page = client.get(f"/documents/{document.pk}/", {"answer": "req_turn0"}).content.decode()
    assert "Back to the answer" not in page
