"""OllamaProvider against a local server that speaks Ollama's /api/generate."""

from __future__ import annotations

import time

import pytest

from rag.llm import GenerationRequest, get_provider
from rag.llm.ollama import OllamaProvider
from ragsite.exceptions import ConfigurationError, GenerationTimeout, LLMUnavailable
from tests.rag.llm.conftest import Received, Reply

PULLED_MODELS = {"mistral:7b"}
ANSWER = "Liability is capped at the fees paid [contract.pdf, page 4]."
REQUEST = GenerationRequest(
    system="Answer only from the context and cite it as [document, page X].",
    prompt=(
        "Context:\n[contract.pdf, p.4]: Liability is capped at the fees paid.\n\n"
        "Question: What caps liability?"
    ),
    question="What caps liability?",
    temperature=0.1,
    max_tokens=256,
)


def generate_api(received: Received) -> Reply:
    """POST /api/generate as Ollama answers it for the models it has pulled."""
    if received.method != "POST" or received.path != "/api/generate":
        return Reply(404, b"404 page not found", headers={"Content-Type": "text/plain"})
    body = received.json()
    if body.get("model") not in PULLED_MODELS:
        return Reply(404, {"error": f"model '{body.get('model')}' not found"})
    return Reply(
        200,
        {
            "model": body["model"],
            "created_at": "2026-01-21T14:32:18.456Z",
            "response": ANSWER,
            "done": True,
            "done_reason": "stop",
            "total_duration": 812_000_000,
            "prompt_eval_count": 812,
            "eval_count": 64,
        },
    )


@pytest.fixture
def ollama(start_server, settings):
    """A running fake Ollama that the provider is configured to use, with a 0.5 s timeout."""
    server = start_server(generate_api)
    settings.OLLAMA_HOST = server.url
    settings.OLLAMA_MODEL = "mistral:7b"
    settings.OLLAMA_TIMEOUT_SECONDS = 0.5
    return server


def test_reply_becomes_a_free_generation_with_token_counts(ollama):
    generation = OllamaProvider().generate(REQUEST)

    assert generation.text == ANSWER
    assert (generation.provider, generation.model) == ("ollama", "mistral:7b")
    assert (generation.input_tokens, generation.output_tokens) == (812, 64)
    assert generation.cost_estimate == 0.0
    assert generation.latency_ms > 0
    assert generation.metadata["done_reason"] == "stop"


def test_request_carries_model_prompt_system_and_options(ollama):
    OllamaProvider().generate(REQUEST)

    [received] = ollama.received
    assert (received.method, received.path) == ("POST", "/api/generate")
    assert received.headers["content-type"] == "application/json"
    assert received.json() == {
        "model": "mistral:7b",
        "prompt": REQUEST.prompt,
        "system": REQUEST.system,
        "stream": False,
        "options": {"temperature": 0.1, "top_p": 0.9, "num_predict": 256},
    }


def test_a_host_with_a_trailing_slash_still_reaches_api_generate(ollama, settings):
    settings.OLLAMA_HOST = ollama.url + "/"

    assert OllamaProvider().generate(REQUEST).text == ANSWER
    assert ollama.received[0].path == "/api/generate"


def test_missing_token_counts_are_zero(ollama):
    ollama.queued.append(Reply(200, {"model": "mistral:7b", "response": "Yes.", "done": True}))

    generation = OllamaProvider().generate(REQUEST)

    assert generation.text == "Yes."
    assert (generation.input_tokens, generation.output_tokens) == (0, 0)


def test_a_reply_slower_than_the_timeout_is_a_generation_timeout_and_not_retried(ollama):
    ollama.queued.append(Reply(200, {"response": "late", "done": True}, delay=5))

    started = time.monotonic()
    with pytest.raises(GenerationTimeout) as caught:
        OllamaProvider().generate(REQUEST)

    assert time.monotonic() - started < 3
    assert caught.value.status_code == 504
    assert caught.value.details["timeout_seconds"] == 0.5
    assert (ollama.connections, len(ollama.received)) == (1, 1)


def test_a_model_that_is_not_pulled_is_llm_unavailable_naming_it(ollama, settings):
    settings.OLLAMA_MODEL = "llama9:70b"

    with pytest.raises(LLMUnavailable) as caught:
        OllamaProvider().generate(REQUEST)

    assert "llama9:70b" in caught.value.message
    assert caught.value.details["status"] == 404
    assert caught.value.details["error"] == "model 'llama9:70b' not found"
    assert len(ollama.received) == 1


@pytest.mark.parametrize("status", [500, 502, 400])
def test_another_http_error_is_llm_unavailable_with_its_status(ollama, status):
    ollama.queued.append(Reply(status, {"error": "llama runner process has terminated"}))

    with pytest.raises(LLMUnavailable) as caught:
        OllamaProvider().generate(REQUEST)

    assert caught.value.status_code == 503
    assert caught.value.details["status"] == status
    assert caught.value.details["error"] == "llama runner process has terminated"
    assert len(ollama.received) == 1


def test_a_closed_port_is_llm_unavailable(settings, closed_port_url):
    settings.OLLAMA_HOST = closed_port_url
    settings.OLLAMA_TIMEOUT_SECONDS = 0.5

    with pytest.raises(LLMUnavailable) as caught:
        OllamaProvider().generate(REQUEST)

    assert caught.value.status_code == 503
    assert closed_port_url in caught.value.message


def test_a_dropped_first_connection_is_retried_once(ollama):
    ollama.drop_connections = 1

    generation = OllamaProvider().generate(REQUEST)

    assert generation.text == ANSWER
    assert ollama.connections == 2
    assert len(ollama.received) == 1


def test_two_dropped_connections_are_llm_unavailable_after_exactly_two_attempts(ollama):
    ollama.drop_connections = 5

    with pytest.raises(LLMUnavailable):
        OllamaProvider().generate(REQUEST)

    assert ollama.connections == 2
    assert ollama.received == []


@pytest.mark.parametrize(
    "body",
    [
        b"<html>502 Bad Gateway</html>",
        b'{"model": "mistral:7b", "done": true}',
        b'{"model": "mistral:7b", "response": 42, "done": true}',
        b'["response"]',
    ],
)
def test_a_reply_without_response_text_is_llm_unavailable(ollama, body):
    ollama.queued.append(Reply(200, body))

    with pytest.raises(LLMUnavailable):
        OllamaProvider().generate(REQUEST)

    assert len(ollama.received) == 1


@pytest.mark.parametrize("host", ["", "ollama:11434", "ftp://ollama:11434", "http://"])
def test_a_host_that_is_not_an_http_url_is_a_configuration_error(settings, host):
    settings.OLLAMA_HOST = host

    with pytest.raises(ConfigurationError) as caught:
        OllamaProvider()

    assert "OLLAMA_HOST" in caught.value.details


def test_get_provider_builds_the_ollama_provider_from_settings(ollama, settings):
    settings.RAG_LLM_PROVIDER = "ollama"

    named = get_provider("ollama")
    default = get_provider()

    assert type(named) is OllamaProvider and type(default) is OllamaProvider
    assert named.name == "ollama"
    assert named.model == "mistral:7b"
    assert named.generate(REQUEST).text == ANSWER
