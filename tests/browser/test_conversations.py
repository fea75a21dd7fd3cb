"""Every answer has an address (#23 item 1) and the ask page keeps a conversation (item 2), in a
real browser: asking moves to /ask/<request_id>/; a citation opens the passage with a way back;
Back and reload show the answer again; a follow-up keeps the thread; "New conversation" starts
over; a firm admin can open a member's answer, another member cannot."""

from __future__ import annotations

import json
import re

import pytest

from rag import services as rag_services
from rag.ingest import service as ingest
from tenants.models import Role
from tests.factories import MembershipFactory
from tests.rag.conftest import fixture_bytes
from tests.rag.pipeline.conftest import _isolated_answer_cache  # noqa: F401 - autouse: no stale hits

from .test_staff_ui import PASSWORD, log_in

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ANSWER_URL = re.compile(r"/ask/(req_[0-9a-f]+)/$")


@pytest.fixture
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def contract(tenant, _media_in_tmp):
    case = rag_services.case_create(tenant=tenant, name="Acme v. Globex")
    return ingest.document_upload(
        tenant=tenant, case=case, filename="contract.pdf", content=fixture_bytes("contract.pdf")
    ).document


def _user(tenant, role):
    user = MembershipFactory(tenant=tenant, role=role).user
    user.set_password(PASSWORD)
    user.save()
    return user


def _ask(page, question: str) -> str:
    """Ask; wait until the address is the new answer's; its request id."""
    before = page.url
    page.fill("#question", question)
    page.click("#ask-button")
    page.wait_for_url(lambda url: ANSWER_URL.search(url) is not None and url != before)
    return ANSWER_URL.search(page.url).group(1)


def test_answers_have_addresses_and_a_conversation_keeps_its_thread(
    page, live_server, tenant, contract, screenshot
):
    member = _user(tenant, Role.MEMBER)
    bodies = []

    def record(request) -> None:
        if request.method == "POST" and request.url.endswith("/api/v1/rag/query"):
            bodies.append(json.loads(request.post_data))

    page.on("request", record)
    log_in(page, live_server, member)
    page.goto(f"{live_server.url}/ask/")
    first = _ask(page, "When may the agreement be terminated?")
    page.wait_for_selector("#answer .citations li")

    # A citation opens the passage; "Back to the answer" and the browser's Back both return.
    page.locator("#answer a.citation-link").first.click()
    page.wait_for_selector("mark#passage")
    back = page.locator("a.back-to-answer")
    assert back.get_attribute("href") == f"/ask/{first}/"
    page.go_back()
    page.wait_for_selector("#answer .citations li")
    assert page.url.endswith(f"/ask/{first}/")
    assert "When may the agreement be terminated?" in page.locator("#answer").inner_text()
    page.reload()
    page.wait_for_selector("#answer .citations li")

    # A follow-up continues the conversation: the first answer moves up into the thread.
    second = _ask(page, "Which law governs it?")
    page.wait_for_selector("#answer .citations li")
    assert second != first
    turns = page.locator("#thread li.turn")
    assert turns.count() == 1 and "When may the agreement be terminated?" in turns.first.inner_text()
    assert "Colorado" in page.locator("#answer").inner_text()
    assert len(bodies) == 2 and bodies[0]["conversation_id"] == bodies[1]["conversation_id"]
    screenshot("conversation")
    with page.expect_download() as memo:
        page.click("#conversation-memo")
    assert memo.value.suggested_filename.endswith(".docx")

    # The second answer's address shows the whole thread again, after a reload too.
    page.reload()
    page.wait_for_selector("#thread li.turn")
    assert page.locator("#thread li.turn").count() == 1

    page.click("#new-conversation")
    assert page.locator("#thread li.turn").count() == 0 and page.url.endswith("/ask/")
    _ask(page, "Who is the seller?")
    assert bodies[-1]["conversation_id"] != bodies[0]["conversation_id"]

    # A firm admin can open the member's answer; another member cannot.
    admin = _user(tenant, Role.ADMIN)
    page.context.clear_cookies()
    log_in(page, live_server, admin)
    page.goto(f"{live_server.url}/ask/{first}/")
    page.wait_for_selector("#answer .citations li")
    assert f"Asked by {member.username}" in page.locator("#answer").inner_text()
    page.context.clear_cookies()
    log_in(page, live_server, _user(tenant, Role.MEMBER))
    assert page.goto(f"{live_server.url}/ask/{first}/").status == 404
