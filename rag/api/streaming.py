"""`POST query` with `"stream": true` (or `Accept: text/event-stream`): the answer as Server-Sent
Events, in this order (each `event: <name>` and one `data:` line of JSON):

- `meta`: `{"request_id"}`, as soon as the question has passed its checks, before the search: the
  reader sees at once that the question was taken (and under which id).
- `sources`: `{"sources": [...]}`, the passages the answer may cite (citation id, document, title,
  pages), once the model is about to write (a cache hit: its cited passages; nothing found: []).
- `delta`: `{"text": "..."}`, answer text to append, as the model writes it. A draft: plain text,
  not yet checked; a cache hit sends its whole answer in one delta.
- `result`: the response exactly as the sync request gives it (citations, flags, confidence,
  provenance), plus `replaces_streamed_text`: true when the checked answer differs from the
  deltas (citations removed, a re-run, "not found"), so a client shows the result's text instead.
- `error`: instead of `result` when the run fails once streaming has begun (the search, the
  model): the query endpoints' error body with `status`, the HTTP status it would have had.

The checks before `meta` (the options, the scope, sanitising) run before the response starts, so a
refused request is an ordinary JSON error with its status. A client that disconnects closes the
events: generation stops and the audit row says `ClientDisconnected`. The response is never
buffered (`X-Accel-Buffering: no` for nginx).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator
from contextlib import suppress

from django.http import StreamingHttpResponse
from rest_framework.utils.encoders import JSONEncoder

from rag.pipeline.context import QueryContext
from rag.pipeline.streaming import AnswerDelta, GenerationStarted
from ragsite.request_id import reset_request_id, set_request_id

MEDIA_TYPE = "text/event-stream"
Events = Generator[object, None, QueryContext]
# An exception as the error body the endpoint would answer it with: (HTTP status, body).
ErrorBody = Callable[[Exception], tuple[int, dict]]


def wants_stream(request) -> bool:
    """Whether the request's Accept header asks for an event stream."""
    return MEDIA_TYPE in request.headers.get("Accept", "")


def stream_response(ctx: QueryContext, events: Events, *, error_body: ErrorBody) -> StreamingHttpResponse:
    """The streamed answer of `ctx` (see the module docstring). Pulls `events` through the
    question's checks now, so a refusal raises here, before any byte is sent."""
    _accepted(events)
    response = StreamingHttpResponse(_body(ctx, events, error_body), content_type=MEDIA_TYPE)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def _accepted(events: Events) -> None:
    """Run the stages up to the question's acceptance (the sanitising stage's `Accepted`)."""
    with suppress(StopIteration):  # the sanitising stage always runs first; never a whole run
        next(events)


def _body(ctx: QueryContext, events: Events, error_body: ErrorBody) -> Iterator[bytes]:
    token = set_request_id(ctx.request_id)  # the view's binding ended when it returned
    try:
        yield _event("meta", {"request_id": ctx.request_id})
        streamed, sources_sent = [], False
        try:
            for event in events:
                if isinstance(event, GenerationStarted):
                    sources_sent = True
                    yield _event("sources", {"sources": _sources(ctx)})
                elif isinstance(event, AnswerDelta):
                    streamed.append(event.text)
                    yield _event("delta", {"text": event.text})
        except Exception as exc:
            status, body = error_body(exc)
            yield _event("error", {**body, "status": status})
            return
        if not sources_sent:  # a cache hit, nothing found: no model ran
            yield _event("sources", {"sources": _sources(ctx)})
        answer = ctx.result.get("answer") or ""
        if not streamed and answer:  # a cache hit or a run without a model: the answer at once
            streamed.append(answer)
            yield _event("delta", {"text": answer})
        yield _event("result", {**ctx.result, "replaces_streamed_text": "".join(streamed) != answer})
    finally:
        events.close()  # a client gone mid-stream: stops the provider's stream, records the run
        reset_request_id(token)


def _sources(ctx: QueryContext) -> list[dict]:
    """The passages the answer may cite: the context's, or a cached answer's cited ones."""
    if ctx.context is not None:
        return [
            {
                "citation_id": source.citation_id,
                "document_id": source.document_id,
                "title": source.title,
                "page": source.page,
                "page_end": source.page_end or source.page,
            }
            for source in ctx.context.sources
        ]
    citations = (ctx.result or {}).get("citations", [])
    fields = ("citation_id", "document_id", "title", "page", "page_end")
    return [{name: citation.get(name) for name in fields} for citation in citations]


def _event(name: str, data: dict) -> bytes:
    """One event; its JSON as the sync response renders it (DRF's encoder: dates, decimals)."""
    return f"event: {name}\ndata: {json.dumps(data, cls=JSONEncoder, ensure_ascii=False)}\n\n".encode()
