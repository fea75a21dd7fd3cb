"""One error body for every API failure: {"error_type", "message", "request_id", "details"}."""

import json
import logging

import pytest
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import OperationalError
from django.http import Http404
from rest_framework import exceptions as drf
from rest_framework.views import APIView

from ragsite import exceptions as app
from ragsite.exception_handlers import api_exception_handler
from ragsite.request_id import reset_request_id, set_request_id

ERROR_KEYS = {"error_type", "message", "request_id", "details"}


def _handle(exc):
    token = set_request_id("req_errors_test")
    try:
        return api_exception_handler(exc, {"view": APIView()})
    finally:
        reset_request_id(token)


@pytest.mark.parametrize(
    ("exc", "status", "error_type"),
    [
        (app.InvalidQuery("Query is empty."), 400, "InvalidQuery"),
        (app.NotFound(), 404, "NotFound"),
        (app.PayloadTooLarge(), 413, "PayloadTooLarge"),
        (app.UnsupportedMediaType(), 415, "UnsupportedMediaType"),
        (app.VectorStoreUnavailable(), 503, "VectorStoreUnavailable"),
        (app.LLMUnavailable(), 503, "LLMUnavailable"),
        (app.GenerationTimeout(), 504, "GenerationTimeout"),
        (drf.NotAuthenticated(), 401, "NotAuthenticated"),
        (drf.PermissionDenied(), 403, "PermissionDenied"),
        (drf.MethodNotAllowed("PATCH"), 405, "MethodNotAllowed"),
        (drf.ParseError(), 400, "ParseError"),
        (drf.UnsupportedMediaType("text/csv"), 415, "UnsupportedMediaType"),
        (Http404(), 404, "NotFound"),
        (OperationalError("server closed the connection"), 503, "VectorStoreUnavailable"),
        (TooManyFilesSent("Too many files"), 413, "PayloadTooLarge"),
        (RequestDataTooBig("Request body too large"), 413, "PayloadTooLarge"),
        (TooManyFieldsSent("Too many fields"), 400, "InvalidInput"),
    ],
)
def test_errors_map_to_status_and_type(exc, status, error_type):
    response = _handle(exc)
    assert response.status_code == status
    assert set(response.data) == ERROR_KEYS
    assert response.data["error_type"] == error_type
    assert response.data["request_id"] == "req_errors_test"
    assert response.data["message"]


def test_validation_errors_carry_field_details():
    response = _handle(drf.ValidationError({"query": ["This field is required."]}))
    assert response.status_code == 400
    assert response.data["details"] == {"query": ["This field is required."]}
    django_error = _handle(DjangoValidationError({"slug": ["Enter a valid slug."]}))
    assert django_error.status_code == 400
    assert django_error.data["details"] == {"slug": ["Enter a valid slug."]}


def test_application_error_details_are_passed_through():
    response = _handle(app.InvalidQuery("Too long.", details={"max_length": 500}))
    assert response.data["details"] == {"max_length": 500}
    assert response.data["message"] == "Too long."


def test_throttled_sets_retry_after():
    response = _handle(drf.Throttled(wait=12.2))
    assert response.status_code == 429
    assert response["Retry-After"] == "13"


def test_unknown_errors_are_500_and_logged_without_leaking_details(caplog):
    with caplog.at_level(logging.ERROR):
        response = _handle(RuntimeError("secret internal state"))
    assert response.status_code == 500
    assert response.data["error_type"] == "InternalError"
    assert "secret" not in response.data["message"]
    assert any("unhandled error" in r.getMessage() and r.exc_info for r in caplog.records)


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v2/health", "/api/"])
def test_unknown_api_urls_answer_json_not_html(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) == ERROR_KEYS


@pytest.mark.django_db
def test_unknown_api_urls_answer_json_even_in_debug(client, settings):
    settings.DEBUG = True
    response = client.get("/api/v1/missing")
    assert response["Content-Type"] == "application/json"


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_unknown_api_urls_answer_404_json_for_unsafe_methods_too(method):
    from django.test import Client

    response = getattr(Client(enforce_csrf_checks=True), method)("/api/v1/no/such/thing")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error_type"] == "NotFound"


def test_a_csrf_failure_under_api_is_the_json_error_body(rf):
    from ragsite.exception_handlers import csrf_failure

    response = csrf_failure(rf.post("/api/v1/rag/query"), reason="CSRF cookie not set.")
    assert response.status_code == 403
    body = json.loads(response.content)
    assert body["error_type"] == "PermissionDenied" and "CSRF cookie not set" in body["message"]
    page = csrf_failure(rf.post("/admin/login/"), reason="CSRF cookie not set.")
    assert page.status_code == 403 and b"<html" in page.content.lower()


def test_unknown_api_urls_answer_json_to_unsafe_methods_of_a_session(member):
    """Not CsrfViewMiddleware's HTML 403: the catch-all does nothing that needs CSRF protection."""
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)
    client.force_login(member)
    response = client.patch("/api/v1/rag/cases/-1", {"name": "x"}, format="json")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error_type"] == "NotFound"
