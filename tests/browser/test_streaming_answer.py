"""The ask page renders a streamed answer: the model's draft text appears while it is written (a
fake Ollama streaming slowly over the real NDJSON protocol), before the final event replaces it
with the verified answer and its citations."""

from __future__ import annotations

import json
import re

import pytest

from rag import services as rag_services
from rag.ingest import service as ingest
from tests.browser.test_staff_ui import NEW_ANSWER, log_in, staff_user  # noqa: F401 - fixture
from tests.rag.conftest import fixture_bytes
from tests.rag.llm.conftest import Received, Reply, start_server  # noqa: F401 - fixture
from tests.rag.llm.test_streaming import ollama_lines
from tests.rag.pipeline.conftest import _isolated_answer_cache  # noqa: F401 - autouse: no stale hits

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

QUOTE = "shall be construed according to the laws of the State of Colorado"


def reply_pieces(prompt: str) -> list[str]:
    """A JSON reply quoting the governing-law clause with the token the prompt labels it by, in
    five pieces as a model would stream it."""
    token = re.findall(r'<source id="([^"]+)"', prompt[: prompt.index(QUOTE)])[-1]
    reply = {
        "answer": f'The agreement "{QUOTE}" [{token}].',
        "citations": [{"id": token, "snippet": QUOTE}],
        "confidence": 0.9,
    }
    text = json.dumps(reply)
    return [text[:40], text[40:60], text[60:80], text[80:100], text[100:]]


# The model's draft with the second piece in, and the page before the final event's render.
DRAFT_BEFORE_RESULT = """() => {
  const draft = document.querySelector("#answer .answer-text.draft");
  if (!draft || !draft.textContent.includes("construed")) return null;
  return { draft: draft.textContent, final: !!document.querySelector("#answer details.timing") };
}"""


@pytest.fixture
def slow_ollama(start_server, settings):  # noqa: F811
    """Ollama as the model, streaming the reply in five pieces 0.8 s apart (whole when not streamed)."""

    def generate(received: Received) -> Reply:
        pieces = reply_pieces(received.json()["prompt"])
        if received.json().get("stream"):
            return Reply(200, chunks=ollama_lines(pieces), chunk_delay=0.8)
        whole = {"model": "mistral:7b", "response": "".join(pieces), "done": True, "done_reason": "stop"}
        return Reply(200, whole)

    server = start_server(generate)
    settings.RAG_LLM_PROVIDER, settings.OLLAMA_HOST = "ollama", server.url
    settings.OLLAMA_MODEL, settings.OLLAMA_TIMEOUT_SECONDS = "mistral:7b", 10
    return server


def test_the_answer_text_appears_before_the_final_event(
    page,
    live_server,
    tenant,
    staff_user,  # noqa: F811
    slow_ollama,
    screenshot,
    settings,
    tmp_path,
):
    settings.MEDIA_ROOT = tmp_path / "media"
    case = rag_services.case_create(tenant=tenant, name="Acme v. Globex")
    ingest.document_upload(
        tenant=tenant, case=case, filename="contract.pdf", content=fixture_bytes("contract.pdf")
    )
    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/ask/")
    page.fill("#question", "Which law governs the agreement?")
    page.click("#ask-button")

    seen = page.wait_for_function(DRAFT_BEFORE_RESULT, polling=50).json_value()
    assert seen["final"] is False, "the draft showed only after the final answer"
    assert "State of Colorado" not in seen["draft"]  # still being written
    screenshot("ask-streaming")

    page.wait_for_function(NEW_ANSWER, arg="")
    assert page.locator("#answer .answer-text.draft").count() == 0  # replaced by the verified answer
    assert "State of Colorado" in page.locator("#answer .answer-text").inner_text()
    assert page.locator("#answer a.marker").count() >= 1
    assert page.locator("#answer .citations li").count() >= 1
    [streamed] = [r for r in slow_ollama.received if r.json().get("stream")]
    assert streamed.path == "/api/generate"
