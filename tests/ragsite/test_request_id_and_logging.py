"""Request ids: returned in X-Request-ID, in error bodies and in every JSON log line."""

import json
import logging

import pytest

from ragsite.logging import JsonFormatter, RequestIdFilter
from ragsite.request_id import reset_request_id, set_request_id


@pytest.mark.django_db
def test_every_response_carries_a_generated_request_id(api_client):
    first = api_client.get("/api/v1/health")["X-Request-ID"]
    second = api_client.get("/api/v1/health")["X-Request-ID"]
    assert first.startswith("req_") and second.startswith("req_") and first != second


@pytest.mark.django_db
def test_a_sane_incoming_request_id_is_kept(api_client):
    response = api_client.get("/api/v1/health", HTTP_X_REQUEST_ID="lb-1234abcd.5")
    assert response["X-Request-ID"] == "lb-1234abcd.5"


@pytest.mark.django_db
@pytest.mark.parametrize("hostile", ["<script>alert(1)</script>", "a" * 200, "short", "x y z 123456"])
def test_an_unsafe_incoming_request_id_is_replaced(api_client, hostile):
    response = api_client.get("/api/v1/health", HTTP_X_REQUEST_ID=hostile)
    assert response["X-Request-ID"].startswith("req_")


@pytest.mark.django_db
def test_error_body_and_header_share_the_request_id(api_client):
    response = api_client.get("/api/v1/tenants/current")
    assert response.status_code == 401
    assert response.json()["request_id"] == response["X-Request-ID"]


def _format(record: logging.LogRecord) -> dict:
    RequestIdFilter().filter(record)
    return json.loads(JsonFormatter().format(record))


def test_log_lines_are_json_with_the_current_request_id():
    token = set_request_id("req_test_0001")
    try:
        record = logging.makeLogRecord(
            {
                "name": "rag.test",
                "levelno": logging.INFO,
                "levelname": "INFO",
                "msg": "retrieved %d",
                "args": (5,),
                "tenant_id": "acme",
            }
        )
        line = _format(record)
    finally:
        reset_request_id(token)
    assert line["message"] == "retrieved 5"
    assert line["request_id"] == "req_test_0001"
    assert line["level"] == "INFO" and line["logger"] == "rag.test"
    assert line["tenant_id"] == "acme"  # extra= fields are kept


def test_log_line_outside_a_request_takes_the_id_from_the_request_object():
    class FakeRequest:
        request_id = "req_from_request"

    record = logging.makeLogRecord({"msg": "Not Found", "request": FakeRequest(), "levelname": "WARNING"})
    line = _format(record)
    assert line["request_id"] == "req_from_request"
    assert "request" not in line


@pytest.mark.django_db
def test_django_request_log_line_carries_the_response_request_id(api_client, caplog):
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = api_client.get("/api/v1/tenants/current")
    records = [r for r in caplog.records if r.name == "django.request"]
    assert records, "django.request logged nothing for a 401"
    assert _format(records[-1])["request_id"] == response["X-Request-ID"]
