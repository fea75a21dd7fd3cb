"""Answer pages in a lawyer's words (#36 item 15), on a 1366 px laptop screen: a source's search
scores wait behind its "Details"; the API's "Information not found in the knowledge base." is
shown as "The documents searched do not say." (the exact message behind "Details"); the case a
question is asked in is in view beside the question box, not only inside Options, and follows
the case chosen there; options name what they do before their API name. No CSP violation."""

from __future__ import annotations

import re

import pytest

from rag import services as rag_services
from rag.ingest import service as ingest
from tests.rag.pipeline.conftest import (
    LEASE,
    LEASE_TITLE,
    MSA,
    MSA_TITLE,
    _isolated_answer_cache,  # noqa: F401 - autouse: no stale hits
)

from .test_staff_ui import NEW_ANSWER, log_in, staff_user  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cases(tenant, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    made = {}
    for name, title, text in (("Acme v. Globex", MSA_TITLE, MSA), ("Initech lease", LEASE_TITLE, LEASE)):
        made[name] = rag_services.case_create(tenant=tenant, name=name)
        outcome = ingest.ingest_now(
            tenant=tenant,
            case=made[name],
            filename=f"{name}.txt",
            content=text.encode(),
            fields=ingest.DocumentFields(title=title),
        )
        assert outcome.status == "ok", outcome.reason
    return made


def _ask(page, question: str) -> None:
    lines = page.locator("#answer p.muted.small")
    previous = lines.last.inner_text() if lines.count() else ""  # the shown answer's request line
    page.fill("#question", question)
    page.click("#ask-button")
    page.wait_for_function(NEW_ANSWER, arg=previous)


def test_scores_wait_behind_details_not_found_is_plain_and_the_case_is_in_view(
    page,
    live_server,
    cases,
    staff_user,  # noqa: F811
):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/ask/")

    # The case is in view with Options closed, and follows the choice made inside them.
    options = page.locator("details.options")
    asking_in = page.locator("#asking-in")
    assert options.get_attribute("open") is None
    assert asking_in.is_visible() and asking_in.inner_text().startswith("Asking in: All cases")
    page.click("#change-case")
    assert options.get_attribute("open") is not None
    assert page.evaluate("document.activeElement.id") == "case-filter"
    page.select_option("#case-filter", label="Acme v. Globex")
    page.click("details.options summary")  # closed again
    assert options.get_attribute("open") is None
    assert asking_in.is_visible() and asking_in.inner_text().startswith("Asking in: Acme v. Globex")

    # Options say what they do; the API's name comes after, smaller.
    page.click("details.options summary")
    top_k = page.locator('label[for="top-k"]')
    assert (
        top_k.inner_text().startswith("Passages to read")
        and top_k.locator(".muted").inner_text() == "(top_k)"
    )
    styles = page.locator("#citation-style option").all_inner_texts()
    assert "Document numbers in the text, [doc_12] (bracketed_ids)" in styles, styles
    assert not any(text in ("bracketed_ids", "inline_numbers", "end_list") for text in styles), styles
    page.click("details.options summary")

    # An answer's sources: title, page and quote in view; the scores behind "Details".
    _ask(page, "How much notice is needed to terminate the master services agreement?")
    source = page.locator("#answer .citations li").first
    assert "ninety (90) days" in page.locator("#answer").inner_text()
    assert "similarity" not in page.locator("#answer").inner_text()
    scores = source.locator("details.source-details > span")
    assert not scores.is_visible()
    source.locator("details.source-details > summary").click()
    assert scores.is_visible()
    assert re.fullmatch(r"Search scores: similarity \d\.\d\d · rank \d\.\d\d", scores.inner_text()), (
        scores.inner_text()
    )

    # "I don't know" in plain words; the service's own message one click away.
    page.click("#new-conversation")
    _ask(page, "What is the boiling point of mercury on Venus?")
    answer = page.locator("#answer")
    assert answer.locator("[data-flag=not-found]").inner_text() == "The documents searched do not say."
    assert "Information not found" not in answer.inner_text()
    assert answer.locator(".badge[data-flag=confidence]").count() == 0  # no "Confidence 0%"
    answer.locator("details.answer-details > summary").click()
    assert (
        "Information not found in the knowledge base."
        in answer.locator("details.answer-details").inner_text()
    )

    # The answer's own address, reloaded: the same words, and the case it was asked in.
    page.wait_for_url(re.compile(r"/ask/req_\w+/$"))
    page.reload()
    page.wait_for_selector("#answer [data-flag=not-found]")
    assert "Information not found" not in page.locator("#answer").inner_text()
    assert page.locator("#asking-in").inner_text().startswith("Asking in: Acme v. Globex")
    assert errors == []  # no script errors, no CSP violations
