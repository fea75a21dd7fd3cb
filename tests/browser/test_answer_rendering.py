"""The staff UI shows an answer as text (issue #20, item 4): a model that obeys a planted instruction
and answers with a remote image carrying a secret, a markdown link and an HTML image gets none of
them into the page: no <img>, no link out of the app, no request to the attacker's server, and a
badge says something was removed. The model is a local fake speaking the Anthropic Messages API."""

from __future__ import annotations

import pytest

from rag import services as rag_services
from rag.ingest import service as ingest
from tests.rag.llm.conftest import start_server  # noqa: F401  (fixture)
from tests.rag.pipeline.conftest import _isolated_answer_cache  # noqa: F401 - autouse: no stale hits
from tests.rag.pipeline.test_answer_links import DOCUMENT, OWN_URL, SECRET, exfiltrating_model
from tests.rag.pipeline.test_remote_replies import remote_model  # noqa: F401  (fixture)

from .test_staff_ui import NEW_ANSWER, log_in, staff_user  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_ask_page_renders_an_exfiltrating_answer_as_text(
    page,
    live_server,
    tenant,
    staff_user,  # noqa: F811
    remote_model,  # noqa: F811
):
    case = rag_services.case_create(tenant=tenant, name="Acme v. Globex")
    outcome = ingest.ingest_now(
        tenant=tenant,
        case=case,
        filename="acme-globex-msa.txt",
        content=DOCUMENT.encode(),
        fields=ingest.DocumentFields(title="Acme Globex Master Services"),
    )
    assert outcome.status == "ok", outcome.reason
    remote_model("anthropic", exfiltrating_model)
    requested = []
    page.on("request", lambda request: requested.append(request.url))

    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/ask/")
    page.fill("#question", "How can the master services agreement be terminated?")
    page.click("#ask-button")
    page.wait_for_function(NEW_ANSWER, arg="")

    answer = page.locator("#answer")
    text = answer.inner_text()
    assert "ninety (90) days" in text and OWN_URL in text
    assert "attacker.example" not in text and "evil.example" not in text and SECRET not in text, text
    assert answer.locator("img, iframe, object, embed, video, audio").count() == 0
    hrefs = answer.locator("a[href]").evaluate_all("links => links.map(a => a.href)")
    assert hrefs and all(href.startswith(live_server.url) for href in hrefs), hrefs  # in-app only
    assert answer.locator('[data-flag="answer_sanitized"]').count() == 1
    assert not [url for url in requested if "attacker.example" in url or "evil.example" in url], requested
