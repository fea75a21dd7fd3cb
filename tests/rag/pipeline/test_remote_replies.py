"""Replies of the remote models through the real pipeline, with local servers speaking the Anthropic
Messages API and Ollama's /api/generate (tests/rag/llm/conftest.py): a reply cut off at
`max_new_tokens` is salvaged to its complete sentences and flagged, `temperature` reaches the
model that accepts one, and passages dropped for the token budget are counted in provenance."""

from __future__ import annotations

import re

import pytest

from rag.pipeline.postprocess import TRUNCATED_DISCLAIMER
from rag.pipeline.run import run_query
from tests.rag.llm.conftest import Received, Reply, start_server  # noqa: F401  (fixture)

from .conftest import MSA_TITLE

API_KEY = "sk-ant-api03-test-key-0123456789"
QUESTION = "How can the master services agreement be terminated?"
SENTENCES = (
    "Either party may terminate this Agreement on ninety (90) days written notice to the other party [{id}]. "
    "The confidentiality obligations survive termination of this Agreement for five years [{id}]. "
)
CUT_OFF = '{{"answer": "' + SENTENCES + "Renewal of the Agreement req"


def msa_citation_id(prompt: str) -> str:
    """The citation token the prompt gives the MSA's passage."""
    return re.search(rf'<source id="([^"]+)"[^>]*title="{MSA_TITLE}"', prompt).group(1)


def anthropic_reply(text: str, stop_reason: str) -> dict:
    return {
        "id": "msg_01Test",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 900, "output_tokens": 64},
    }


def ollama_reply(text: str, done_reason: str) -> dict:
    return {
        "model": "mistral:7b",
        "created_at": "2026-01-21T14:32:18.456Z",
        "response": text,
        "done": True,
        "done_reason": done_reason,
        "prompt_eval_count": 900,
        "eval_count": 64,
    }


def cut_off_model(provider: str):
    """A fake model of `provider` whose every reply is cut at the token limit mid-JSON."""

    def answer(received: Received) -> Reply:
        body = received.json()
        if provider == "anthropic":
            if "temperature" in body:  # API version 2026-10-21 refuses sampling parameters
                error = {
                    "type": "invalid_request_error",
                    "message": "temperature: Extra inputs are not permitted",
                }
                return Reply(400, {"type": "error", "error": error})
            text = CUT_OFF.format(id=msa_citation_id(body["messages"][0]["content"]))
            return Reply(200, anthropic_reply(text, "max_tokens"))
        return Reply(200, ollama_reply(CUT_OFF.format(id=msa_citation_id(body["prompt"])), "length"))

    return answer


@pytest.fixture
def remote_model(start_server, settings):  # noqa: F811  (the imported fixture)
    """remote_model(provider, answer) -> the running fake server the pipeline's provider uses."""

    def configure(provider: str, answer):
        server = start_server(answer)
        settings.RAG_LLM_PROVIDER = provider
        settings.ANTHROPIC_API_KEY = API_KEY
        settings.ANTHROPIC_BASE_URL = server.url
        settings.ANTHROPIC_MODEL = "claude-sonnet-4-6"
        settings.ANTHROPIC_MAX_RETRIES = 0
        settings.OLLAMA_HOST = server.url
        settings.OLLAMA_MODEL = "mistral:7b"
        settings.RAG_MAX_RETRIES_ON_HALLUCINATION = 0
        # These fakes reply in the JSON format, with the passages in the prompt; Claude's own
        # citations (search results) are tests/rag/llm/test_claude_citations.py's.
        settings.ANTHROPIC_CITATIONS = False
        return server

    return configure


@pytest.mark.django_db
@pytest.mark.parametrize("provider", ["anthropic", "ollama"])
def test_a_reply_cut_at_max_new_tokens_shows_its_complete_sentences_with_a_warning(
    tenant, corpus, remote_model, provider
):
    server = remote_model(provider, cut_off_model(provider))
    result = run_query(tenant=tenant, question=QUESTION, max_new_tokens=64).result
    sent = server.received[0].json()
    assert (sent["max_tokens"] if provider == "anthropic" else sent["options"]["num_predict"]) == 64
    citation_id = result["citations"][0]["citation_id"]
    assert result["answer"] == SENTENCES.format(id=citation_id).strip()  # no '{"answer"', no half sentence
    assert [c["document_id"] for c in result["citations"]] == [corpus["msa"].pk]
    assert result["flags"]["token_warning"] is True
    assert result["disclaimer"].startswith(TRUNCATED_DISCLAIMER)
    assert "cut off" in result["disclaimer"] and "max_new_tokens" in result["disclaimer"]
    assert result["flags"]["hallucination_detected"] is False


@pytest.mark.django_db
def test_a_whole_reply_has_no_token_warning(tenant, corpus, remote_model):
    def whole(received: Received) -> Reply:
        token = msa_citation_id(received.json()["prompt"])
        return Reply(200, ollama_reply(f'{{"answer": "{SENTENCES.format(id=token)}"}}', "stop"))

    remote_model("ollama", whole)
    result = run_query(tenant=tenant, question=QUESTION).result
    assert result["answer"] == SENTENCES.format(id=result["citations"][0]["citation_id"]).strip()
    assert result["flags"]["token_warning"] is False
    assert TRUNCATED_DISCLAIMER not in result["disclaimer"]


@pytest.mark.django_db
def test_passages_dropped_for_the_token_budget_are_counted_in_provenance(tenant, corpus):
    question = "termination notice"
    roomy = run_query(tenant=tenant, question=question, dry_run=True).result
    tight = run_query(tenant=tenant, question=question, dry_run=True, token_budget=200).result
    assert roomy["provenance"]["passages_dropped"] == 0
    assert len(roomy["selected_snippets"]) == 2
    assert len(tight["selected_snippets"]) == 1
    assert tight["provenance"]["passages_dropped"] == 1


@pytest.mark.django_db
def test_the_requests_temperature_reaches_ollama(tenant, corpus, remote_model):
    def whole(received: Received) -> Reply:
        token = msa_citation_id(received.json()["prompt"])
        return Reply(200, ollama_reply(f'{{"answer": "{SENTENCES.format(id=token)}"}}', "stop"))

    server = remote_model("ollama", whole)
    run_query(tenant=tenant, question=QUESTION, temperature=0.7)
    run_query(tenant=tenant, question=QUESTION)
    assert [r.json()["options"]["temperature"] for r in server.received] == [0.7, 0.1]


@pytest.mark.django_db
def test_claude_gets_no_temperature_and_the_generation_says_so(tenant, corpus, remote_model):
    # API version 2026-10-21 (anthropic SDK 2.x) answers 400 to any sampling parameter.
    def whole(received: Received) -> Reply:
        body = received.json()
        if "temperature" in body:
            return Reply(
                400, {"type": "error", "error": {"type": "invalid_request_error", "message": "temperature"}}
            )
        text = f'{{"answer": "{SENTENCES.format(id=msa_citation_id(body["messages"][0]["content"]))}"}}'
        return Reply(200, anthropic_reply(text, "end_turn"))

    server = remote_model("anthropic", whole)
    ctx = run_query(tenant=tenant, question=QUESTION, temperature=0.7)
    assert ctx.result["answer"] and "temperature" not in server.received[0].json()
    assert ctx.generation.metadata["temperature"].startswith("not sent")
