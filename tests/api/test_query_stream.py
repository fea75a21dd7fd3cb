"""POST /api/v1/rag/query streamed as Server-Sent Events: meta, sources, deltas, then the verified result
(or an error event); errors before the stream are ordinary JSON; cache, audit and metrics as sync;
tenant scope and filters; a client that disconnects stops the model (a fake Ollama streaming)."""

from __future__ import annotations

import json
import time

import pytest
from django.db import connection
from prometheus_client import REGISTRY

from rag.models import AuditLog
from rag.pipeline.stages.retrieve import RetrieveStage
from ragsite.exceptions import LLMUnavailable, VectorStoreUnavailable
from tests.rag.llm.conftest import Reply, start_server  # noqa: F401  (the fake Ollama)
from tests.rag.llm.test_streaming import ollama_lines
from tests.rag.pipeline.conftest import make_look_alikes

pytestmark = pytest.mark.django_db

QUERY = "/api/v1/rag/query"
QUESTION = "How much notice is needed to terminate the master services agreement?"


def ask(client, headers=None, **body):
    return client.post(QUERY, {"query": QUESTION, **body}, format="json", headers=headers or {})


def events_of(response) -> list[tuple[str, dict]]:
    """The (event, data) pairs of a streamed response, read to its end."""
    assert response.streaming and response["Content-Type"] == "text/event-stream"
    return parse(b"".join(response.streaming_content).decode())


def parse(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def streamed_text(events) -> str:
    return "".join(data["text"] for name, data in events if name == "delta")


def test_stream_sends_meta_sources_then_the_answer_in_pieces_then_the_sync_shaped_result(
    corpus, viewer_client
):
    response = ask(viewer_client, stream=True)

    assert response.status_code == 200
    assert response["Cache-Control"] == "no-cache" and response["X-Accel-Buffering"] == "no"
    events = events_of(response)
    names = [name for name, _ in events]
    assert names[:2] == ["meta", "sources"] and names[-1] == "result" and set(names[2:-1]) == {"delta"}
    assert len(names) >= 5, "the extractive answer comes sentence by sentence"
    meta, sources, result = events[0][1], events[1][1]["sources"], events[-1][1]
    assert meta == {"request_id": result["request_id"]} and meta["request_id"] == response["X-Request-ID"]
    assert {source["document_id"] for source in sources} >= {corpus["msa"].pk}
    assert "ninety (90) days" in result["answer"]
    assert streamed_text(events) == result["answer"] and result["replaces_streamed_text"] is False
    sync = ask(viewer_client, query=QUESTION + " ").json()  # the same question, from the cache
    assert set(result) - {"replaces_streamed_text"} == set(sync)
    cited = {c["citation_id"] for c in result["citations"]}
    assert cited <= {source["citation_id"] for source in sources}


def test_accept_text_event_stream_streams_too(corpus, viewer_client):
    response = ask(viewer_client, headers={"Accept": "text/event-stream"})
    assert [name for name, _ in events_of(response)][-1] == "result"


def test_stream_false_with_the_accept_header_answers_json(corpus, viewer_client):
    response = ask(viewer_client, headers={"Accept": "text/event-stream"}, stream=False)
    assert response.status_code == 200 and "ninety (90) days" in response.json()["answer"]


def test_a_streamed_query_is_audited_counted_and_cached_like_a_sync_one(corpus, viewer_client, tenant):
    def answered():
        labels = {"tenant": tenant.slug, "template": "legal_analysis_balanced", "status": "answered"}
        return REGISTRY.get_sample_value("rag_queries_total", labels) or 0.0

    before = answered()
    result = events_of(ask(viewer_client, stream=True, top_k=3))[-1][1]

    row = AuditLog.objects.get(request_id=result["request_id"])
    assert row.status == "answered" and row.options == {"top_k": 3} and not row.cache_hit
    assert row.result == {k: v for k, v in result.items() if k != "replaces_streamed_text"}
    assert answered() == before + 1

    again = events_of(ask(viewer_client, stream=True, top_k=3))
    assert [name for name, _ in again] == ["meta", "sources", "delta", "result"]  # the cached answer at once
    cached = again[-1][1]
    assert cached["flags"]["cache_hit"] and cached["answer"] == result["answer"]
    assert again[2][1]["text"] == cached["answer"] and not cached["replaces_streamed_text"]
    assert [s["document_id"] for s in again[1][1]["sources"]] == [
        c["document_id"] for c in cached["citations"]
    ]
    assert ask(viewer_client, top_k=3).json()["flags"]["cache_hit"]  # sync shares the cache
    assert AuditLog.objects.get(request_id=cached["request_id"]).cache_hit


def test_an_answer_changed_by_verification_says_it_replaces_the_streamed_text(
    corpus, viewer_client, fake_provider
):
    reply = {
        "answer": 'It says "ninety (90) days written notice" [1] and "a lunar eclipse" [7].',
        "citations": [
            {"id": "1", "snippet": "ninety (90) days written notice"},
            {"id": "7", "snippet": "a lunar eclipse"},
        ],
    }
    fake_provider(reply)
    events = events_of(ask(viewer_client, stream=True))
    result = events[-1][1]
    assert "[7]" in streamed_text(events)
    assert result["flags"]["invalid_citations"] == ["7"] and "[7]" not in result["answer"]
    assert result["replaces_streamed_text"] is True


def test_a_model_failure_mid_stream_is_an_error_event_and_an_audited_failure(
    corpus, viewer_client, fake_provider
):
    fake_provider(error=LLMUnavailable("connection refused"))
    response = ask(viewer_client, stream=True)

    assert response.status_code == 200  # the stream had begun
    events = events_of(response)
    assert [name for name, _ in events] == ["meta", "sources", "error"]
    error = events[-1][1]
    assert (error["status"], error["error_type"], error["message"]) == (
        503,
        "LLMUnavailable",
        "connection refused",
    )
    assert error["answer"] is None and error["request_id"] == events[0][1]["request_id"]
    row = AuditLog.objects.get(request_id=error["request_id"])
    assert (row.status, row.error_type) == ("failed", "LLMUnavailable")


def test_meta_comes_before_the_search_and_a_search_failure_is_an_error_event(
    corpus, viewer_client, monkeypatch
):
    searched = []

    def unreachable(stage, ctx):
        searched.append(ctx.request_id)
        raise VectorStoreUnavailable("The search index is unreachable.")

    monkeypatch.setattr(RetrieveStage, "run", unreachable)
    response = ask(viewer_client, stream=True)
    assert response.status_code == 200 and not searched  # the checks ran; the search waits
    chunks = iter(response.streaming_content)
    meta = parse(next(chunks).decode())
    assert meta == [("meta", {"request_id": response["X-Request-ID"]})] and not searched
    events = parse(b"".join(chunks).decode())
    assert searched == [response["X-Request-ID"]]
    assert [name for name, _ in events] == ["error"]
    assert (events[0][1]["status"], events[0][1]["error_type"]) == (503, "VectorStoreUnavailable")
    row = AuditLog.objects.get(request_id=response["X-Request-ID"])
    assert (row.status, row.error_type) == ("failed", "VectorStoreUnavailable")


@pytest.mark.parametrize(
    ("body", "headers", "status", "field"),
    [
        ({"query": ""}, {}, 400, None),
        ({"stream": "yes"}, {}, 400, "stream"),
        ({"mode": "async"}, {}, 400, "mode"),
        ({"dry_run": True}, {}, 400, "dry_run"),
        ({}, {"Idempotency-Key": "k-1"}, 400, "Idempotency-Key"),
        ({"top_k": 0}, {}, 400, None),
        ({"filters": {"document_ids": [987654321]}}, {}, 404, None),
    ],
)
def test_errors_before_streaming_are_json_with_their_status(
    corpus, viewer_client, body, headers, status, field
):
    response = ask(
        viewer_client, headers={"Accept": "text/event-stream", **headers}, **{"stream": True, **body}
    )
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    error = response.json()
    assert error["error_type"] and error["answer"] is None
    if field:
        assert field in error["details"]


def test_unauthenticated_stream_is_a_json_401(corpus, api_client):
    response = ask(api_client, headers={"Accept": "text/event-stream"}, stream=True)
    assert response.status_code == 401 and response.json()["error_type"] == "NotAuthenticated"


def test_another_tenants_stream_sees_none_of_the_corpus(corpus, other_admin_client):
    events = events_of(ask(other_admin_client, stream=True))
    assert events[:2] == [("meta", {"request_id": events[-1][1]["request_id"]}), ("sources", {"sources": []})]
    assert events[-1][1]["answer"] is None and events[-1][1]["citations"] == []


def test_a_stream_with_document_ids_never_cites_outside_them(case, ingest_text, viewer_client):
    look_alikes = make_look_alikes("document_ids", case, ingest_text)
    question = "How much notice terminates the Hooli Raviga supply agreement?"
    events = events_of(ask(viewer_client, query=question, stream=True, filters=look_alikes.filters))
    sources, result = events[1][1]["sources"], events[-1][1]
    assert sources and {s["document_id"] for s in sources} == {look_alikes.inside.pk}
    assert {c["document_id"] for c in result["citations"]} <= {look_alikes.inside.pk}
    assert "Raviga" not in streamed_text(events)


@pytest.fixture
def slow_ollama(start_server, settings):  # noqa: F811
    """A fake Ollama streaming 300 words, 10 ms apart, as the pipeline's model."""
    reply = Reply(200, chunks=ollama_lines([f"word{n} " for n in range(300)]), chunk_delay=0.01)
    server = start_server(lambda received: reply)
    settings.RAG_LLM_PROVIDER, settings.OLLAMA_HOST = "ollama", server.url
    settings.OLLAMA_MODEL, settings.OLLAMA_TIMEOUT_SECONDS = "mistral:7b", 2
    return reply


def test_ollama_text_streams_through_the_api_as_it_comes(corpus, viewer_client, slow_ollama):
    pieces = ["The notice ", "is ninety (90) days ", "[1]."]
    slow_ollama.chunks = ollama_lines(pieces)
    events = events_of(ask(viewer_client, stream=True))
    assert [data["text"] for name, data in events if name == "delta"] == pieces
    assert events[-1][1]["provenance"]["model_provider"] == "ollama"


def test_a_client_that_disconnects_stops_the_model_and_the_run_is_recorded(
    corpus, viewer_client, slow_ollama, monkeypatch
):
    response = ask(viewer_client, stream=True)
    chunks = iter(response.streaming_content)
    first = parse("".join(next(chunks).decode() for _ in range(3)))
    assert [name for name, _ in first] == ["meta", "sources", "delta"]

    # What the WSGI server does when the client goes away; the end of the request must not close
    # the test's database connection (inside its transaction), as Django's test client ensures.
    with monkeypatch.context() as patched:
        patched.setattr(connection, "close_if_unusable_or_obsolete", lambda: None)
        response.close()

    deadline = time.monotonic() + 3
    while not slow_ollama.aborted and time.monotonic() < deadline:
        time.sleep(0.01)
    assert slow_ollama.aborted and slow_ollama.sent < 100, "Ollama was still asked for tokens"
    row = AuditLog.objects.get(request_id=first[0][1]["request_id"])
    assert (row.status, row.error_type) == ("failed", "ClientDisconnected")
