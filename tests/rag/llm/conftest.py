"""A real HTTP server on 127.0.0.1 for the provider adapters to talk to, and a port nothing listens on."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Received:
    """One request as the server read it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Reply:
    """What to answer: `body` is sent as JSON unless it is bytes; `delay` seconds pass before answering.

    A streamed reply has `chunks` instead (sent with chunked transfer encoding, `chunk_delay`
    seconds apart, as the real APIs stream); `sent` counts the chunks that went out and `aborted`
    says the client closed the connection before the last one."""

    status: int = 200
    body: object = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunks: list[bytes] | None = None
    chunk_delay: float = 0.0
    sent: int = 0
    aborted: bool = False


def as_streamed(reply: Reply, received: Received) -> Reply:
    """A whole 200 reply to a request asking `"stream": true`, sent the way the real API streams
    it: an Anthropic message as server-sent events, an Ollama reply as NDJSON lines (its text a
    few words a piece). Any other reply is sent as it is."""
    try:
        asked = received.json().get("stream") is True
    except (ValueError, AttributeError):
        asked = False
    body = reply.body
    if not asked or reply.chunks is not None or reply.status != 200 or not isinstance(body, dict):
        return reply
    if body.get("type") == "message":
        text = "".join(block.get("text", "") for block in body.get("content", []))
        events = message_events(body, _words(text))
        return Reply(200, headers={"Content-Type": "text/event-stream"}, chunks=events, delay=reply.delay)
    if isinstance(body.get("response"), str):
        lines = [{**body, "response": piece, "done": False} for piece in _words(body["response"])]
        lines.append({**body, "response": "", "done": True})
        chunks = [json.dumps(line).encode() + b"\n" for line in lines]
        return Reply(200, headers={"Content-Type": "application/x-ndjson"}, chunks=chunks, delay=reply.delay)
    return reply


def _words(text: str, size: int = 4) -> list[str]:
    words = text.split(" ")
    return [
        " ".join(words[i : i + size]) + (" " if i + size < len(words) else "")
        for i in range(0, len(words), size)
    ]


def message_events(message: dict, pieces: list[str]) -> list[bytes]:
    """The Messages API's event stream of `message` (its usage and stop reason) with `pieces` of text."""

    def sse(event: str, data: dict) -> bytes:
        return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n".encode()

    usage = message.get("usage", {})
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events = [
        sse("message_start", {"message": start}),
        sse("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        sse("ping", {}),
    ]
    for piece in pieces:
        events.append(
            sse("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": piece}})
        )
    stop = {"stop_reason": message.get("stop_reason"), "stop_sequence": None}
    return [
        *events,
        sse("content_block_stop", {"index": 0}),
        sse("message_delta", {"delta": stop, "usage": {"output_tokens": usage.get("output_tokens", 0)}}),
        sse("message_stop", {}),
    ]


class FakeServer(ThreadingHTTPServer):
    """Answers each request with `queued` replies first, then with `answer(received)`.

    `connections` counts accepted TCP connections; the first `drop_connections` of them are closed
    without reading or answering anything.
    """

    daemon_threads = True
    block_on_close = False  # keep-alive connections may still be open when the test ends

    def __init__(self, answer: Callable[[Received], Reply]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.queued: list[Reply] = []
        self.received: list[Received] = []
        self.connections = 0
        self.drop_connections = 0
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def process_request(self, request, client_address):
        with self._lock:
            self.connections += 1
            drop = self.drop_connections > 0
            self.drop_connections -= drop
        if drop:
            request.close()
            return
        super().process_request(request, client_address)

    def reply_to(self, received: Received) -> Reply:
        with self._lock:
            self.received.append(received)
            queued = self.queued.pop(0) if self.queued else None
        return as_streamed(queued or self.answer(received), received)

    def handle_error(self, request, client_address):
        """A client that gave up (timeout) makes the late answer fail; that is expected here."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeServer

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.server.reply_to(Received(self.command, self.path, headers, body))
        if reply.delay and self.server.stopping.wait(reply.delay):
            return
        if reply.chunks is not None:
            self._stream(reply)
            return
        payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        headers = {"Content-Type": "application/json", **reply.headers, "Content-Length": str(len(payload))}
        self.send_response(reply.status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST

    def _stream(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in {"Content-Type": "text/event-stream", **reply.headers}.items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for chunk in reply.chunks:
                if reply.sent and reply.chunk_delay and self.server.stopping.wait(reply.chunk_delay):
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                reply.sent += 1
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            reply.aborted = True
        self.close_connection = True

    def log_message(self, format, *args):
        pass


@pytest.fixture
def start_server():
    """start_server(answer) -> a running FakeServer; stopped after the test."""
    servers: list[FakeServer] = []

    def start(answer: Callable[[Received], Reply]) -> FakeServer:
        server = FakeServer(answer)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stopping.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def closed_port_url() -> str:
    """The URL of a local port that refuses connections (it was just bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
