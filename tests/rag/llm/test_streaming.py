"""The providers' `stream`: Ollama's NDJSON lines and the Anthropic Messages API's server-sent
events, spoken by local fake servers as the real APIs send them (chunked, a piece at a time); and
the extractive provider, sentence by sentence. Closing a stream early closes the connection."""

from __future__ import annotations

import json
import time

import pytest

from rag.llm import GenerationRequest, Source
from rag.llm.anthropic import AnthropicProvider
from rag.llm.base import generate_streamed
from rag.llm.extractive import ExtractiveProvider, reply_pieces
from rag.llm.ollama import OllamaProvider
from rag.pipeline.streaming import AnswerText, answer_deltas
from ragsite.exceptions import GenerationTimeout, LLMUnavailable, OllamaUnavailable
from tests.rag.llm.conftest import Received, Reply

API_KEY = "sk-ant-api03-test-key-0123456789"
PIECES = ['{"answer": "Liability is ', "capped at the fees ", 'paid [1]."', ', "confidence": 0.9}']
REQUEST = GenerationRequest(
    system="Answer only from the numbered sources and cite them.",
    prompt="[1] Clause 4.2: liability is capped at the fees paid.\n\nQuestion: What caps liability?",
    question="What caps liability?",
    max_tokens=256,
)


def drain(stream):
    """(the pieces a stream yields, the Generation it returns)."""
    pieces = []
    while True:
        try:
            pieces.append(next(stream))
        except StopIteration as finished:
            return pieces, finished.value


def wait_for(condition, seconds=3.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


# --- Ollama: POST /api/generate with "stream": true answers NDJSON lines --------------------------


def ollama_lines(pieces, *, done_reason="stop", model="mistral:7b") -> list[bytes]:
    """Ollama's streamed reply: one line per piece, then the "done" line with the counts."""
    lines = [
        {"model": model, "created_at": "2026-01-21T14:32:18Z", "response": piece, "done": False}
        for piece in pieces
    ]
    lines.append(
        {
            "model": model,
            "created_at": "2026-01-21T14:32:19Z",
            "response": "",
            "done": True,
            "done_reason": done_reason,
            "context": [1, 2, 3],
            "total_duration": 812_000_000,
            "prompt_eval_count": 812,
            "eval_count": 64,
        }
    )
    return [json.dumps(line).encode() + b"\n" for line in lines]


@pytest.fixture
def ollama(start_server, settings):
    def generate_api(received: Received) -> Reply:
        if received.path != "/api/generate" or received.json().get("stream") is not True:
            return Reply(400, {"error": "this fake only streams"})
        return Reply(200, headers={"Content-Type": "application/x-ndjson"}, chunks=ollama_lines(PIECES))

    server = start_server(generate_api)
    settings.OLLAMA_HOST, settings.OLLAMA_MODEL = server.url, "mistral:7b"
    settings.OLLAMA_TIMEOUT_SECONDS = 0.5
    return server


def test_ollama_streams_each_line_and_returns_the_counts_of_the_last(ollama):
    pieces, generation = drain(OllamaProvider().stream(REQUEST))

    assert pieces == PIECES
    assert generation.text == "".join(PIECES)
    assert (generation.provider, generation.model) == ("ollama", "mistral:7b")
    assert (generation.input_tokens, generation.output_tokens) == (812, 64)
    assert generation.metadata["done_reason"] == "stop" and not generation.truncated
    [received] = ollama.received
    assert received.json()["stream"] is True and received.json()["options"]["num_predict"] == 256


def test_ollama_stream_cut_at_the_token_limit_is_truncated(ollama):
    ollama.queued.append(Reply(200, chunks=ollama_lines(["Liability is"], done_reason="length")))
    _, generation = drain(OllamaProvider().stream(REQUEST))
    assert generation.truncated


def test_ollama_error_line_mid_stream_is_ollama_unavailable(ollama):
    lines = [*ollama_lines(["Liability "])[:1], b'{"error": "model runner has unexpectedly stopped"}\n']
    ollama.queued.append(Reply(200, chunks=lines))
    stream = OllamaProvider().stream(REQUEST)
    assert next(stream) == "Liability "
    with pytest.raises(OllamaUnavailable) as caught:
        next(stream)
    assert "unexpectedly stopped" in caught.value.details["error"]


def test_ollama_stream_without_its_done_line_is_ollama_unavailable(ollama):
    ollama.queued.append(Reply(200, chunks=ollama_lines(["Liability "])[:1]))
    with pytest.raises(OllamaUnavailable, match="before its last line"):
        drain(OllamaProvider().stream(REQUEST))


def test_ollama_stalling_mid_stream_is_a_generation_timeout(ollama):
    ollama.queued.append(Reply(200, chunks=ollama_lines(["a ", "b "]), chunk_delay=2.0))
    with pytest.raises(GenerationTimeout):
        drain(OllamaProvider().stream(REQUEST))


def test_closing_an_ollama_stream_closes_the_connection(ollama):
    reply = Reply(200, chunks=ollama_lines([f"word{n} " for n in range(200)]), chunk_delay=0.01)
    ollama.queued.append(reply)
    stream = OllamaProvider().stream(REQUEST)
    assert [next(stream), next(stream)] == ["word0 ", "word1 "]

    stream.close()

    assert wait_for(lambda: reply.aborted), "Ollama kept sending after the client closed"
    assert reply.sent < 50


# --- Anthropic: the Messages API with "stream": true answers server-sent events --------------------


def sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_events(pieces, *, stop_reason="end_turn", model="claude-sonnet-4-6") -> list[bytes]:
    """The Messages API's event stream for a reply of `pieces`, as the API sends it."""
    message = {
        "id": "msg_01Stream",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1200, "output_tokens": 1},
    }
    block = {"type": "text", "text": ""}
    events = [
        sse("message_start", {"type": "message_start", "message": message}),
        sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        sse("ping", {"type": "ping"}),
    ]
    for piece in pieces:
        delta = {"type": "text_delta", "text": piece}
        events.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
    stop = {"stop_reason": stop_reason, "stop_sequence": None}
    return [
        *events,
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse("message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 300}}),
        sse("message_stop", {"type": "message_stop"}),
    ]


@pytest.fixture
def api(start_server, settings):
    def messages_api(received: Received) -> Reply:
        body = received.json()
        key = received.headers.get("x-api-key") or received.headers.get("authorization", "")[7:]
        if key != API_KEY or body.get("stream") is not True or "temperature" in body:
            error = {"type": "invalid_request_error", "message": "not a streaming request"}
            return Reply(400, {"type": "error", "error": error})
        return Reply(200, chunks=anthropic_events(PIECES))

    server = start_server(messages_api)
    settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL = API_KEY, server.url
    settings.ANTHROPIC_MODEL, settings.ANTHROPIC_TIMEOUT_SECONDS, settings.ANTHROPIC_MAX_RETRIES = (
        "claude-sonnet-4-6",
        0.5,
        0,
    )
    return server


def test_anthropic_streams_text_deltas_with_tokens_and_cost(api):
    pieces, generation = drain(AnthropicProvider().stream(REQUEST))

    assert pieces == PIECES
    assert generation.text == "".join(PIECES)
    assert (generation.provider, generation.model) == ("anthropic", "claude-sonnet-4-6")
    assert (generation.input_tokens, generation.output_tokens) == (1200, 300)
    assert generation.cost_estimate == pytest.approx((1200 * 3 + 300 * 15) / 1e6)
    assert generation.metadata["message_id"] == "msg_01Stream" and not generation.truncated
    [received] = api.received
    assert received.path == "/v1/messages" and received.json()["messages"][0]["content"] == REQUEST.prompt


def test_anthropic_stream_stopped_at_max_tokens_is_truncated(api):
    api.queued.append(Reply(200, chunks=anthropic_events(["Liability is"], stop_reason="max_tokens")))
    _, generation = drain(AnthropicProvider().stream(REQUEST))
    assert generation.truncated


def test_anthropic_error_event_mid_stream_is_llm_unavailable(api):
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    api.queued.append(Reply(200, chunks=[*anthropic_events(["Liability "])[:4], sse("error", error)]))
    stream = AnthropicProvider().stream(REQUEST)
    assert next(stream) == "Liability "
    with pytest.raises(LLMUnavailable, match="overloaded"):
        next(stream)


def test_anthropic_stream_without_message_stop_is_llm_unavailable(api):
    api.queued.append(Reply(200, chunks=anthropic_events(["Liability "])[:4]))
    with pytest.raises(LLMUnavailable, match="message_stop"):
        drain(AnthropicProvider().stream(REQUEST))


def test_anthropic_stalling_mid_stream_is_a_generation_timeout(api):
    api.queued.append(Reply(200, chunks=anthropic_events(["a ", "b "]), chunk_delay=2.0))
    with pytest.raises(GenerationTimeout):
        drain(AnthropicProvider().stream(REQUEST))


def test_closing_an_anthropic_stream_closes_the_connection(api):
    reply = Reply(200, chunks=anthropic_events([f"word{n} " for n in range(200)]), chunk_delay=0.01)
    api.queued.append(reply)
    stream = AnthropicProvider().stream(REQUEST)
    assert next(stream) == "word0 "

    stream.close()

    assert wait_for(lambda: reply.aborted), "the API kept sending after the client closed"
    assert reply.sent < 50


# --- The extractive provider and the answer text of a growing reply -------------------------------


SOURCES = (
    Source("1", 1, "Services Agreement", 1, "Either party may terminate the Agreement on 90 days notice."),
    Source("2", 2, "Lease", 1, "Landlord may terminate this Lease on thirty days notice if rent is unpaid."),
)


def test_extractive_stream_is_its_reply_sentence_by_sentence():
    provider = ExtractiveProvider()
    question = "Who may terminate on notice?"
    request = GenerationRequest(system="", prompt="", question=question, sources=SOURCES)
    pieces, generation = drain(provider.stream(request))

    assert generation.text == provider.generate(request).text
    assert "".join(pieces) == generation.text
    answer = json.loads(generation.text)["answer"]
    text = AnswerText()
    shown = [text.feed(piece) for piece in pieces]
    assert "".join(shown) == answer
    sentences = [piece for piece in shown if piece]
    assert len(sentences) >= 2 and sentences[0] != answer  # not the whole answer at once


def test_reply_pieces_add_up_to_the_reply_whatever_it_holds():
    for text in ('{"answer": "A. B? C [1] d", "x": 1}', '{"answer": null}', "", "plain text. Two."):
        assert "".join(reply_pieces(text)) == text


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (['{"ans', 'wer": "Rent is ', 'due \\"monthly\\" [1].", "x": []}'], 'Rent is due "monthly" [1].'),
        (['```json\n{"answer": "caf\\u', '00e9 [1]"}\n```'], "café [1]"),  # an escape cut in half waits
        (["Rent is due ", "monthly [1]."], "Rent is due monthly [1]."),  # prose is its own text
        (['{"citations": [], "answer": "Late', ' field"}'], "Late field"),
        (['{"confidence": 0.4}'], ""),
    ],
)
def test_answer_text_shows_only_the_answer_string_as_far_as_it_goes(chunks, expected):
    text = AnswerText()
    shown = [text.feed(chunk) for chunk in chunks]
    assert "".join(shown) == expected


def test_closing_the_answer_deltas_closes_the_provider_stream():
    closed = []

    def chunks():
        try:
            yield '{"answer": "one. '
            yield "two. "
            yield "three."
        finally:
            closed.append(True)

    deltas = answer_deltas(chunks())
    assert next(deltas).text == "one. "
    deltas.close()
    assert closed == [True]


def test_a_provider_without_stream_gives_its_whole_reply_at_once():
    class Whole:
        name, model = "whole", "m"

        def generate(self, request):
            return ExtractiveProvider().generate(request)

    pieces, generation = drain(generate_streamed(Whole(), REQUEST))
    assert pieces == [generation.text]
