"""The error bodies the API promises, for tests that check a body's exact fields."""

import re

# Every endpoint's error body.
ERROR_FIELDS = {"error_type", "message", "request_id", "details"}
# The query endpoints' (POST query, the job poll) add the service-interface spec's answer fields,
# so a client reading every body as an answer does not crash (rag/api/query_errors.py).
QUERY_ERROR_FIELDS = ERROR_FIELDS | {
    "answer",
    "citations",
    "confidence",
    "processing_time_ms",
    "error_details",
}
# POST query and the job poll (a job id: one path segment).
QUERY_PATHS = re.compile(r"^/api/v1/rag/(?:query|jobs/[^/]+)/?$")


def error_fields_of(path: str) -> set[str]:
    """The fields of an error body answered at `path`."""
    return QUERY_ERROR_FIELDS if QUERY_PATHS.match(path) else ERROR_FIELDS
