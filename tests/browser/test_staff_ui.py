"""The staff UI in a real browser: log in, create a case, upload a PDF, wait until it is ready, ask
a question, open a citation and land on the cited page, with the passage marked. Two files at once,
one of them unreadable: the good one ends ready and the bad one's error stays on the page. A
follow-up question asks again; a question run in the background is answered after polling; agentic
search shows its steps, and a question in two parts shows each part's cited answer."""

from __future__ import annotations

import re

import pytest

from rag import services as rag_services
from rag.ingest import service as ingest
from tenants.models import Role
from tests.factories import MembershipFactory
from tests.rag.conftest import FIXTURES, fixture_bytes
from tests.rag.pipeline.conftest import _isolated_answer_cache  # noqa: F401 - autouse: no stale hits

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"


@pytest.fixture
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def staff_user(tenant):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    user.set_password(PASSWORD)
    user.save()
    return user


def log_in(page, live_server, user) -> None:
    page.goto(f"{live_server.url}/cases/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/cases/")


def test_upload_ask_and_open_the_cited_page(page, live_server, staff_user, screenshot, _media_in_tmp):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))

    log_in(page, live_server, staff_user)
    screenshot("cases")
    page.fill("#case-name", "Acme v. Globex")
    page.fill("#case-client", "Acme Corp")
    page.click("text=Create case")
    page.wait_for_url(re.compile(r"/cases/\d+/$"))

    page.select_option("#doc-type", "contract")
    page.set_input_files("#file-input", str(FIXTURES / "contract.pdf"))
    upload_row = page.locator("#uploads li")
    page.wait_for_selector("#documents tbody tr[data-document-id]")  # the list refreshes when done
    assert page.locator("#documents .status-ready").count() == 1, upload_row.all_inner_texts()
    screenshot("case")

    page.click("text=Ask about this case")
    page.fill("#question", "When may the agreement be terminated?")
    page.click("#ask-button")
    page.wait_for_selector("#answer .citations li")
    screenshot("ask")
    first = page.locator("#answer .citations li").first
    cited_page = int(re.search(r"page (\d+)", first.inner_text()).group(1))
    assert page.locator("#answer a.marker").count() >= 1  # markers in the answer link to sources
    assert page.locator("#answer .badge[data-flag=confidence]").count() == 1
    page.click("text=Time taken, step by step")
    stages = page.locator("#answer .timing tr").all_inner_texts()
    assert len(stages) > 3 and any(row.startswith("Search") for row in stages), stages
    assert not any("_" in row.split("\t")[0] for row in stages), stages  # words, not stage ids

    # Work product: the memo downloads; "Copy with citations" puts the answer and its sources on
    # the clipboard.
    with page.expect_download() as memo:
        page.click("text=Export memo (DOCX)")
    assert memo.value.suggested_filename.endswith(".docx")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("[data-action=copy-citations]")
    page.wait_for_selector("text=Copied, with its citations.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("Question: When may the agreement be terminated?") and "Sources:\n[1] " in copied

    first.locator("a.citation-link").click()
    page.wait_for_url(re.compile(r"/documents/\d+/\?start=\d+&end=\d+&answer=req_\w+#passage$"))
    mark = page.locator("mark#passage")
    assert mark.count() == 1 and mark.inner_text().strip()
    section = mark.locator("xpath=ancestor::section[contains(@class, 'page')]")
    assert section.get_attribute("id") == f"page-{cited_page}"
    assert mark.is_visible()
    screenshot("document")
    assert errors == []  # no script errors, no CSP violations


XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def test_a_bad_file_beside_a_good_one_keeps_its_error_on_the_page(
    page, live_server, tenant, staff_user, _media_in_tmp
):
    case = rag_services.case_create(tenant=tenant, name="Mixed upload")
    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/cases/{case.pk}/")
    page.set_input_files(
        "#file-input",
        [
            {"name": "contract.txt", "mimeType": "text/plain", "buffer": fixture_bytes("contract.txt")},
            {"name": "figures.xlsx", "mimeType": XLSX, "buffer": fixture_bytes("not_docx.zip")},
        ],
    )
    # Once both have settled the page stays (a reload would wipe the error) and offers a refresh.
    page.wait_for_selector("#uploads-done", state="visible")
    good = page.locator("#uploads li", has_text="contract.txt")
    bad = page.locator("#uploads li", has_text="figures.xlsx")
    assert "ready" in good.get_attribute("class") and "Ready" in good.inner_text()
    assert "failed" in bad.get_attribute("class"), bad.inner_text()
    assert "not a PDF, DOCX, TXT or EML document" in bad.inner_text(), bad.inner_text()
    page.click("#refresh-list")
    page.wait_for_selector("#documents tbody tr[data-document-id]")
    assert page.locator("#documents tbody tr[data-document-id]").count() == 1
    assert page.locator("#documents .status-ready").count() == 1


# The answer box shows a new answer: visible, with a request line other than `previous`'s.
NEW_ANSWER = """previous => {
  const box = document.getElementById("answer");
  const line = [...box.querySelectorAll("p.muted.small")].pop();
  return !box.hidden && line && line.textContent.startsWith("Request ") && line.textContent !== previous;
}"""


def _request_line(page) -> str:
    return page.locator("#answer p.muted.small").last.inner_text()


def test_a_follow_up_asks_again_and_a_background_question_is_polled(
    page, live_server, tenant, staff_user, screenshot, _media_in_tmp
):
    case = rag_services.case_create(tenant=tenant, name="Acme v. Globex")
    ingest.document_upload(
        tenant=tenant, case=case, filename="contract.pdf", content=fixture_bytes("contract.pdf")
    )
    calls = []
    page.on("request", lambda request: calls.append((request.method, request.url)))
    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/ask/")
    page.fill("#question", "When may the agreement be terminated?")
    page.click("#ask-button")
    page.wait_for_function(NEW_ANSWER, arg="")

    follow_up = page.locator("#answer .follow-ups button").first
    question, first = follow_up.inner_text(), _request_line(page)
    follow_up.click()
    page.wait_for_function(NEW_ANSWER, arg=first)
    assert page.locator("#question").input_value() == question
    asked = [url for method, url in calls if method == "POST" and url.endswith("/api/v1/rag/query")]
    assert len(asked) == 2

    page.click("details.options summary")
    page.check("#background")
    page.fill("#question", "Who may terminate the agreement for convenience?")
    second = _request_line(page)
    page.click("#ask-button")
    page.wait_for_function(NEW_ANSWER, arg=second)
    assert page.locator("#answer .citations li").count() >= 1
    assert any(method == "GET" and "/api/v1/rag/jobs/" in url for method, url in calls), calls

    # Agentic search shows the agent's steps as sentences; the exact tool call is one click away.
    page.uncheck("#background")
    page.check("#agentic")
    third = _request_line(page)
    page.click("#ask-button")
    page.wait_for_function(NEW_ANSWER, arg=third)
    page.click("details.agent-trace summary")
    steps = page.locator("#answer .agent-steps li").all_inner_texts()
    assert any(re.search(r"Searched .+ for “.+”.*: \d+ passages?\.", step) for step in steps), steps
    assert not any("search_semantic(" in step for step in steps), steps
    page.locator("#answer .agent-steps details.tool-call summary").first.click()
    assert "search_" in page.locator("#answer .agent-steps details.tool-call pre").first.inner_text()

    # A question in two parts, with the reasoning steps shown: each part with its own cited answer.
    page.uncheck("#agentic")
    page.check("#show-cot-steps")
    page.fill("#question", "Which law governs the agreement and who is the seller?")
    fourth = _request_line(page)
    page.click("#ask-button")
    page.wait_for_function(NEW_ANSWER, arg=fourth)
    parts = page.locator("#answer .reasoning-steps > li")
    assert parts.count() == 2
    # Asked in the same conversation: the part is searched in the document the last answer cited.
    assert "which law governs the agreement?" in parts.nth(0).inner_text().lower()
    assert "Colorado" in parts.nth(0).inner_text() and parts.nth(0).locator("a.marker").count() >= 1
    assert "seller" in parts.nth(1).inner_text() and parts.nth(1).locator("a.marker").count() >= 1
    screenshot("ask-reasoning")


def test_an_ambiguous_question_names_the_candidates_and_a_button_asks_about_one(
    page, live_server, tenant, staff_user, screenshot, _media_in_tmp
):
    from rag.ingest.service import DocumentFields
    from rag.models import Document, DocumentStatus
    from tests.rag.sponsorships import APACHE, APACHE_TITLE, CANO, CANO_TITLE

    case = rag_services.case_create(tenant=tenant, name="Sponsorships")
    for text, title in ((CANO, CANO_TITLE), (APACHE, APACHE_TITLE)):
        ingest.document_upload(
            tenant=tenant,
            case=case,
            filename=f"{title.lower().replace(' ', '-')}.txt",
            content=text.encode(),
            fields=DocumentFields(title=title, doc_type="contract"),
        )
    assert set(Document.objects.filter(case=case).values_list("status", flat=True)) == {DocumentStatus.READY}
    cano = Document.objects.get(case=case, title=CANO_TITLE)
    bodies = []
    page.on(
        "request",
        lambda request: bodies.append(request.post_data_json) if request.url.endswith("/rag/query") else None,
    )
    page.set_viewport_size({"width": 1366, "height": 900})  # #36: a lawyer's laptop
    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/ask/")
    page.fill("#question", "What law governs the sponsorship agreement?")
    page.click("#ask-button")
    page.wait_for_function(NEW_ANSWER, arg="")
    # Both contracts are answered, grouped by document, and named as the candidates.
    answer = page.locator("#answer").inner_text()
    assert CANO_TITLE in answer and APACHE_TITLE in answer
    buttons = page.locator("#answer .clarification button")
    assert buttons.count() == 2
    assert {b.get_attribute("data-document-id") for b in buttons.all()} == {
        str(d.pk) for d in Document.objects.filter(case=case)
    }
    screenshot("ask-ambiguous")

    # Reloaded, the answer page's question box is empty: the button still asks the question answered.
    page.reload()
    page.wait_for_selector("#answer .clarification button")
    assert page.input_value("#question") == ""
    first = _request_line(page)
    page.locator(f'#answer .clarification button[data-document-id="{cano.pk}"]').click()
    page.wait_for_function(NEW_ANSWER, arg=first)
    assert bodies[-1]["query"] == "What law governs the sponsorship agreement?"
    assert bodies[-1]["filters"]["document_ids"] == [cano.pk]
    links = page.locator("#answer .citations .citation-link").all_inner_texts()
    assert links and set(links) == {CANO_TITLE}
    assert page.locator("#answer .clarification button").count() == 0


def test_the_question_box_counts_down_and_refuses_past_the_limit_without_cutting(
    page, live_server, staff_user, settings
):
    limit = settings.RAG_MAX_QUERY_LENGTH
    posts = []
    page.on("request", lambda request: request.method == "POST" and posts.append(request.url))
    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/ask/")
    page.fill("#question", "x" * (limit - 10))
    assert page.locator("#question-count").inner_text() == "10 characters left"

    long_question = "y" * (limit + 20)
    page.fill("#question", long_question)
    counter = page.locator("#question-count")
    assert counter.inner_text() == f"20 characters over the limit of {limit}"
    assert "error" in counter.get_attribute("class")
    page.click("#ask-button")
    error = page.locator("#answer .error")
    assert error.inner_text() == f"The query is {limit + 20} characters long; the limit is {limit}."
    assert page.locator("#question").input_value() == long_question  # nothing cut
    assert not [url for url in posts if url.endswith("/api/v1/rag/query")]


def test_each_upload_says_one_thing_once(page, live_server, tenant, staff_user, _media_in_tmp):
    case = rag_services.case_create(tenant=tenant, name="Upload messages")
    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/cases/{case.pk}/")
    page.set_input_files("#file-input", [{"name": "empty.txt", "mimeType": "text/plain", "buffer": b""}])
    empty = page.locator("#uploads li", has_text="empty.txt")
    page.wait_for_selector("#uploads li.failed")
    assert empty.locator(".state").inner_text() == "empty.txt is empty."  # said once
    assert not empty.locator("progress").is_visible()  # no full blue bar for a file not added

    # A program without an extension is judged by its bytes and refused with the reason.
    program = {"name": "setup", "mimeType": "application/octet-stream", "buffer": b"\x7fELF" + b"\0" * 64}
    page.set_input_files("#file-input", [program])
    refused = page.locator("#uploads li", has_text="setup")
    page.locator("#uploads li.failed").nth(1).wait_for()
    assert "This file is a computer program, not a PDF, DOCX, TXT or EML document" in refused.inner_text()

    existing = ingest.document_upload(
        tenant=tenant, case=case, filename="contract.txt", content=fixture_bytes("contract.txt")
    ).document
    copy = {"name": "copy.txt", "mimeType": "text/plain", "buffer": fixture_bytes("contract.txt")}
    page.set_input_files("#file-input", [copy])
    duplicate = page.locator("#uploads li.duplicate")
    duplicate.wait_for()
    assert "Already in this case, as" in duplicate.inner_text()
    assert duplicate.locator("a").get_attribute("href") == f"/documents/{existing.pk}/"
    assert page.locator("#uploads-done").is_visible()  # the page stays, so the message does
