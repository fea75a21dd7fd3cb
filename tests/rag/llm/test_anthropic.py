"""AnthropicProvider against a local server that speaks the Messages API (version 2026-10-21)."""

from __future__ import annotations

import logging
import re
import time

import pytest

from rag.llm import GenerationRequest, get_provider
from rag.llm.anthropic import AnthropicProvider
from ragsite.exceptions import ConfigurationError, GenerationTimeout, LLMUnavailable
from tests.rag.llm.conftest import Received, Reply
from tests.rag.llm.fake_claude import API_KEY, SAMPLING_PARAMETERS, api_error, refused

REQUEST = GenerationRequest(
    system="Answer only from the numbered sources and cite them.",
    prompt="[1] Clause 4.2: liability is capped at the fees paid.\n\nQuestion: What caps liability?",
    question="What caps liability?",
    temperature=0.1,
    max_tokens=256,
)


def message(model: str, *texts: str, input_tokens: int = 1200, output_tokens: int = 300) -> dict:
    """A Messages API reply with one text block per text."""
    return {
        "id": "msg_01Test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text} for text in texts],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def messages_api(received: Received) -> Reply:
    """POST /v1/messages as the API answers it: authenticated, versioned, no sampling parameters."""
    refusal = refused(received)
    if refusal is not None:
        return refusal
    return Reply(
        200, message(received.json()["model"], "Clause 4.2 caps ", "liability at the fees paid [1].")
    )


@pytest.fixture
def api(start_server, settings):
    """A running fake Messages API that the provider is configured to use (0.5 s timeout, no retries)."""
    server = start_server(messages_api)
    settings.ANTHROPIC_API_KEY = API_KEY
    settings.ANTHROPIC_BASE_URL = server.url
    settings.ANTHROPIC_MODEL = "claude-sonnet-4-6"
    settings.ANTHROPIC_TIMEOUT_SECONDS = 0.5
    settings.ANTHROPIC_MAX_RETRIES = 0
    return server


def test_reply_becomes_a_generation_with_tokens_cost_and_latency(api):
    generation = AnthropicProvider().generate(REQUEST)

    assert generation.text == "Clause 4.2 caps liability at the fees paid [1]."
    assert (generation.provider, generation.model) == ("anthropic", "claude-sonnet-4-6")
    assert (generation.input_tokens, generation.output_tokens, generation.tokens_used) == (1200, 300, 1500)
    assert generation.cost_estimate == pytest.approx((1200 * 3 + 300 * 15) / 1_000_000)
    assert generation.latency_ms > 0
    assert generation.metadata["stop_reason"] == "end_turn"
    assert "cost_note" not in generation.metadata


def test_request_carries_model_system_prompt_max_tokens_key_and_version(api):
    AnthropicProvider().generate(REQUEST)

    [received] = api.received
    body = received.json()
    assert (received.method, received.path) == ("POST", "/v1/messages")
    assert body["model"] == "claude-sonnet-4-6"
    assert body["system"] == REQUEST.system
    assert body["messages"] == [{"role": "user", "content": REQUEST.prompt}]
    assert body["max_tokens"] == 256
    assert body.get("stream") in (None, False)
    # API version 2026-10-21 answers 400 to any sampling parameter, so the temperature stays out.
    assert not set(SAMPLING_PARAMETERS) & body.keys()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", received.headers["anthropic-version"])
    # SDK 2.x sends the key as a bearer token; the API also takes it as x-api-key.
    assert (
        f"Bearer {API_KEY}" == received.headers.get("authorization")
        or received.headers.get("x-api-key") == API_KEY
    )


def test_an_empty_system_prompt_is_left_out(api):
    AnthropicProvider().generate(GenerationRequest(system="", prompt="Hello?", question="Hello?"))

    assert "system" not in api.received[0].json()


@pytest.mark.parametrize(
    ("model", "input_price", "output_price"),
    [
        ("claude-opus-4-1-20250805", 15, 75),
        ("claude-opus-4-5-20251101", 5, 25),
        ("claude-haiku-4-5", 1, 5),
        pytest.param(
            "claude-3-5-haiku-20241022",
            0.8,
            4,
            marks=pytest.mark.filterwarnings("ignore:The model.*deprecated"),
        ),
    ],
)
def test_cost_follows_the_price_of_the_model(api, settings, model, input_price, output_price):
    settings.ANTHROPIC_MODEL = model

    generation = AnthropicProvider().generate(REQUEST)

    assert generation.model == model
    assert generation.cost_estimate == pytest.approx((1200 * input_price + 300 * output_price) / 1_000_000)


def test_a_model_without_a_known_price_costs_zero_with_a_note(api, settings):
    settings.ANTHROPIC_MODEL = "claude-experimental-9"

    generation = AnthropicProvider().generate(REQUEST)

    assert generation.cost_estimate == 0.0
    assert generation.tokens_used == 1500
    assert "claude-experimental-9" in generation.metadata["cost_note"]


def test_a_reply_slower_than_the_timeout_is_a_generation_timeout(api):
    api.queued.append(Reply(200, message("claude-sonnet-4-6", "late"), delay=5))
    provider = AnthropicProvider()

    started = time.monotonic()
    with pytest.raises(GenerationTimeout) as caught:
        provider.generate(REQUEST)

    assert time.monotonic() - started < 3
    assert caught.value.status_code == 504
    assert caught.value.details["timeout_seconds"] == 0.5
    assert len(api.received) == 1  # ANTHROPIC_MAX_RETRIES = 0


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(500, "api_error"), (529, "overloaded_error"), (429, "rate_limit_error"), (503, "api_error")],
)
def test_server_failures_are_llm_unavailable(api, status, error_type):
    api.queued.append(api_error(status, error_type, "try again later"))

    with pytest.raises(LLMUnavailable) as caught:
        AnthropicProvider().generate(REQUEST)

    assert caught.value.status_code == 503
    assert caught.value.details["status"] == status
    assert caught.value.details["error_type"] == error_type
    assert caught.value.details["request_id"] == "req_test"


def test_the_sdk_retries_as_many_times_as_configured(api, settings):
    settings.ANTHROPIC_MAX_RETRIES = 1
    api.queued.append(api_error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "10"}))

    generation = AnthropicProvider().generate(REQUEST)

    assert generation.text == "Clause 4.2 caps liability at the fees paid [1]."
    assert len(api.received) == 2


def test_a_rejected_key_is_a_configuration_error_that_does_not_reveal_the_key(api, settings, caplog):
    wrong_key = "sk-ant-api03-wrong-key-9876543210"
    settings.ANTHROPIC_API_KEY = wrong_key
    caplog.set_level(logging.DEBUG)

    with pytest.raises(ConfigurationError) as caught:
        AnthropicProvider().generate(REQUEST)

    assert caught.value.status_code == 503
    assert caught.value.details["status"] == 401
    assert caught.value.details["error_type"] == "authentication_error"
    assert "ANTHROPIC_API_KEY" in caught.value.details
    assert len(api.received) == 1
    for text in (caught.value.message, repr(caught.value.details), caplog.text):
        assert wrong_key not in text


def test_permission_denied_is_a_configuration_error(api):
    api.queued.append(api_error(403, "permission_error", "Your API key does not have permission"))

    with pytest.raises(ConfigurationError) as caught:
        AnthropicProvider().generate(REQUEST)

    assert caught.value.details["status"] == 403


def test_another_refusal_is_llm_unavailable_with_its_status(api):
    api.queued.append(api_error(404, "not_found_error", "model: claude-sonnet-4-6"))

    with pytest.raises(LLMUnavailable) as caught:
        AnthropicProvider().generate(REQUEST)

    assert caught.value.details["status"] == 404
    assert caught.value.details["error_type"] == "not_found_error"


def test_an_unreachable_api_is_llm_unavailable(api, settings, closed_port_url):
    settings.ANTHROPIC_BASE_URL = closed_port_url

    with pytest.raises(LLMUnavailable) as caught:
        AnthropicProvider().generate(REQUEST)

    assert caught.value.status_code == 503
    assert api.received == []


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<html>upstream proxy error</html>", "application/json"),
        (b"<html>upstream proxy error</html>", "text/html"),
        (b'{"type": "message", "content": "not a list of blocks"}', "application/json"),
        (b"{}", "application/json"),
    ],
)
def test_a_reply_that_is_not_a_message_is_llm_unavailable(api, body, content_type):
    api.queued.append(Reply(200, body, headers={"Content-Type": content_type}))

    with pytest.raises(LLMUnavailable) as caught:
        AnthropicProvider().generate(REQUEST)

    assert caught.value.message == "The Anthropic API sent a reply that could not be read."
    assert len(api.received) == 1


def test_a_missing_api_key_is_a_configuration_error_before_any_request(api, settings):
    settings.ANTHROPIC_API_KEY = ""

    with pytest.raises(ConfigurationError) as caught:
        AnthropicProvider()

    assert "ANTHROPIC_API_KEY" in caught.value.details
    assert api.received == []


def test_get_provider_builds_the_anthropic_provider_from_settings(api, settings):
    settings.RAG_LLM_PROVIDER = "anthropic"

    named = get_provider("anthropic")
    default = get_provider()

    assert type(named) is AnthropicProvider and type(default) is AnthropicProvider
    assert named.name == "anthropic"
    assert named.model == "claude-sonnet-4-6"
    assert named.generate(REQUEST).text.startswith("Clause 4.2")
