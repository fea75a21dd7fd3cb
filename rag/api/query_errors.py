"""The query endpoints' error body (issue #19): the house error body (`error_type`, `message`,
`request_id`, `details`) plus the service-interface spec's "Error Response Format" (`answer: null`,
`citations: []`, `confidence: 0.0`, `processing_time_ms`, `error_details`), so a client that reads
every body of `POST query` or of a job poll as an answer does not crash on an error."""

from __future__ import annotations

import time

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

# What an answer-reading client finds in an error: no answer, nothing cited, no confidence.
NO_ANSWER = {"answer": None, "citations": [], "confidence": 0.0}


def answer_shaped_error(body: dict, *, processing_time_ms: float | None) -> dict:
    """`body` (an error body) with the spec's answer fields added; its own fields are kept."""
    return {
        **NO_ANSWER,
        **body,
        "processing_time_ms": round(processing_time_ms or 0.0, 1),
        "error_details": error_details(body),
    }


def error_details(body: dict) -> str:
    """The spec's one-line `error_details`: the `details` as "name: problem; …", else the message."""
    details = body.get("details")
    if isinstance(details, dict) and details:
        return "; ".join(f"{name}: {_as_text(problem)}" for name, problem in details.items())
    if isinstance(details, list) and details:
        return "; ".join(_as_text(problem) for problem in details)
    return str(body.get("message") or "")


def _as_text(problem) -> str:
    # DRF validation errors come as lists (of lists) of messages.
    if isinstance(problem, list | tuple):
        return " ".join(_as_text(item) for item in problem)
    if isinstance(problem, dict):
        return ", ".join(f"{name}: {_as_text(item)}" for name, item in problem.items())
    return str(problem)


class AnswerShapedErrorsMixin:
    """For an APIView: every error it answers (validation, authentication, throttling, not found,
    the pipeline's 5xx) has the answer-shaped body, timed from the start of the request."""

    def dispatch(self, request, *args, **kwargs):
        self.started = time.perf_counter()
        return super().dispatch(request, *args, **kwargs)

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        if isinstance(response.data, dict):
            response.data = answer_shaped_error(response.data, processing_time_ms=self.elapsed_ms())
        return response

    def elapsed_ms(self) -> float:
        """Milliseconds since this request reached the view."""
        return (time.perf_counter() - self.started) * 1000


class QueryErrorSerializer(serializers.Serializer):
    """The error body of the query endpoints (for OpenAPI)."""

    answer = serializers.CharField(allow_null=True, help_text="Always null in an error.")
    citations = serializers.ListField(child=serializers.DictField(), help_text="Always [] in an error.")
    confidence = serializers.FloatField(
        help_text="Always 0.0 in an error: the service-interface spec's error field. An answer's is "
        "`confidence_score` (the orchestration spec's response); each body keeps its own spec's name."
    )
    error_type = serializers.CharField(help_text='E.g. "InvalidQuery", "OllamaUnavailable".')
    message = serializers.CharField()
    request_id = serializers.CharField(allow_null=True)
    details = serializers.JSONField(help_text="Per-field problems or other specifics; {} when none.")
    error_details = serializers.CharField(help_text="`details` as one line of text (else the message).")
    processing_time_ms = serializers.FloatField(help_text="Time spent before the request failed.")


# The failures any authenticated query endpoint can answer with, whatever it does.
COMMON_QUERY_ERRORS = {
    400: "The request is not valid.",
    401: "Not authenticated: no, unknown or revoked credentials.",
    403: "Authenticated, but no tenant is active (or a tenant_id of another tenant).",
    429: "Throttled: too many requests for the tenant or the credential; see Retry-After.",
    500: "An unexpected error occurred.",
}


def query_error_responses(described: dict[int, str]) -> dict:
    """OpenAPI responses with the answer-shaped error body: the common failures plus `described`
    ({status: description})."""
    descriptions = {**COMMON_QUERY_ERRORS, **described}
    return {
        code: OpenApiResponse(QueryErrorSerializer, description=text) for code, text in descriptions.items()
    }
