"""A fake Anthropic Messages API for tests: a local server (tests.rag.llm.conftest) that checks each
request like the API does (path, key, no sampling parameters) and replies from a script."""

from __future__ import annotations

import pytest

from tests.rag.llm.conftest import Received, Reply, start_server  # noqa: F401

API_KEY = "sk-ant-api03-test-key-0123456789"
MODEL = "claude-sonnet-4-6"
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")  # API version 2026-10-21 refuses them


def api_error(status: int, error_type: str, message: str, **headers: str) -> Reply:
    """An error reply in the API's shape."""
    body = {"type": "error", "error": {"type": error_type, "message": message}, "request_id": "req_test"}
    return Reply(status, body, headers={"request-id": "req_test", **headers})


def reply(*blocks: dict) -> dict:
    """A Messages API reply with these content blocks."""
    return {
        "id": "msg_01Test",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": list(blocks),
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 500, "output_tokens": 60},
    }


def tool_use(name: str, data: dict, id: str = "toolu_1") -> dict:
    return {"type": "tool_use", "id": id, "name": name, "input": data}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def refused(received: Received) -> Reply | None:
    """The API's refusal of a request it would not take (wrong path, key or version, a sampling
    parameter, a missing field), or None."""
    if received.method != "POST" or received.path != "/v1/messages":
        return api_error(404, "not_found_error", f"Not found: {received.path}")
    key = received.headers.get("x-api-key") or received.headers.get("authorization", "").removeprefix(
        "Bearer "
    )
    if key != API_KEY:
        return api_error(401, "authentication_error", "invalid x-api-key")
    if not received.headers.get("anthropic-version"):
        return api_error(400, "invalid_request_error", "anthropic-version: header is required")
    body = received.json()
    for name in SAMPLING_PARAMETERS:
        if name in body:
            return api_error(400, "invalid_request_error", f"{name}: Extra inputs are not permitted")
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return api_error(400, "invalid_request_error", f"{name}: Field required")
    return None


class Claude:
    """The fake Messages API: checks each request like the API, then answers from `script`."""

    def __init__(self, server):
        self.server = server
        self.script: list = []  # replies: a dict, a Reply, or a function of the request's body

    @property
    def bodies(self) -> list[dict]:
        return [received.json() for received in self.server.received]

    def answer(self, received: Received) -> Reply:
        refusal = refused(received)
        if refusal is not None:
            return refusal
        body = received.json()
        if not self.script:
            return api_error(400, "invalid_request_error", "the test scripted no more replies")
        nxt = self.script.pop(0)
        if callable(nxt):  # a reply made from the request
            nxt = nxt(body)
        return nxt if isinstance(nxt, Reply) else Reply(200, nxt)


@pytest.fixture
def claude(start_server, settings):  # noqa: F811
    holder: dict = {}
    server = start_server(lambda received: holder["claude"].answer(received))
    holder["claude"] = Claude(server)
    settings.ANTHROPIC_API_KEY = API_KEY
    settings.ANTHROPIC_BASE_URL = server.url
    settings.ANTHROPIC_MODEL = MODEL
    settings.ANTHROPIC_TIMEOUT_SECONDS = 0.5
    settings.ANTHROPIC_MAX_RETRIES = 0
    settings.RAG_AGENT_MAX_TOOL_CALLS = 4
    return holder["claude"]
