"""One request id per request: taken from a sane incoming `X-Request-ID` or generated, kept in a
context variable for log lines and error bodies, and returned in the response header."""

from __future__ import annotations

import re
import uuid
from contextvars import ContextVar

HEADER = "X-Request-ID"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{8,64}$")
_current: ContextVar[str | None] = ContextVar("request_id", default=None)


def new_request_id() -> str:
    return f"req_{uuid.uuid4().hex}"


def get_request_id() -> str | None:
    """The id of the request (or task) being handled in this context, if any."""
    return _current.get()


def set_request_id(value: str | None):
    """Bind `value` for the current context; returns a token for `reset_request_id`."""
    return _current.set(value)


def reset_request_id(token) -> None:
    _current.reset(token)


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.headers.get(HEADER, "")
        request_id = incoming if _SAFE_ID.match(incoming) else new_request_id()
        request.request_id = request_id
        token = set_request_id(request_id)
        try:
            response = self.get_response(request)
        finally:
            reset_request_id(token)
        response[HEADER] = request_id
        return response
