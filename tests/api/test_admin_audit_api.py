"""GET /admin/audit and /admin/audit/<request_id>: the tenant's audit trail, newest first, every
filter, bad filter values, another tenant's rows never listed nor found, admins only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest

from rag import selectors
from rag.pipeline.config import QueryConfig
from rag.pipeline.context import QueryContext
from rag.pipeline.result import flags
from ragsite.exceptions import NotFound
from tests.api.conftest_admin import ROLES_BELOW_ADMIN, make_audit
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

AUDIT = "/api/v1/rag/admin/audit"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ROW_FIELDS = {
    "id",
    "request_id",
    "user",
    "api_key_prefix",
    "conversation_id",
    "query",
    "search_query",
    "template_id",
    "status",
    "error_type",
    "documents_retrieved",
    "documents_used",
    "flags",
    "confidence",
    "latency_ms",
    "tokens_used",
    "cost_estimate",
    "model_provider",
    "model",
    "cache_hit",
    "created_at",
}


def at(moment: datetime, tenant, request_id: str, **fields):
    """An audit row created at `moment` (rows are append-only: created_at cannot be set later)."""
    with mock.patch("django.utils.timezone.now", return_value=moment):
        return make_audit(tenant, request_id, **fields)


@pytest.fixture
def trail(tenant, other_tenant):
    """Five rows of `tenant`, an hour apart (req_1 oldest), and two of `other_tenant`."""
    alice = UserFactory(username="alice")
    at(T0, tenant, "req_1", user=alice, conversation_id="conv_a", confidence=0.8, tokens_used=150)
    at(
        T0 + timedelta(hours=1),
        tenant,
        "req_2",
        api_key_prefix="abcd1234",
        status="not_found",
        template_id="house_style",
        conversation_id="conv_a",
    )
    at(
        T0 + timedelta(hours=2),
        tenant,
        "req_3",
        user=alice,
        cache_hit=True,
        flags={"cache_hit": True, "hallucination_warning": False},
    )
    at(
        T0 + timedelta(hours=3),
        tenant,
        "req_4",
        api_key_prefix="abcd1234",
        status="failed",
        error_type="LLMUnavailable",
        flags={},
    )
    at(
        T0 + timedelta(hours=4),
        tenant,
        "req_5",
        status="dry_run",
        flags={"hallucination_warning": True, "prompt_injection_detected": True},
        options={"top_k": 3},
        result={"dry_run": True},
    )
    bob = UserFactory(username="bob")
    at(T0 + timedelta(hours=5), other_tenant, "req_globex_1", user=bob, api_key_prefix="")
    at(
        T0 + timedelta(hours=6),
        other_tenant,
        "req_5",
        status="answered",
        flags={"hallucination_warning": True},
    )


def ids(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return [row["request_id"] for row in response.json()["results"]]


def test_lists_the_tenants_rows_newest_first_with_every_field(admin_client, trail):
    response = admin_client.get(AUDIT)
    assert ids(response) == ["req_5", "req_4", "req_3", "req_2", "req_1"]
    page = response.json()
    assert page["count"] == 5 and page["next"] is None
    rows = {row["request_id"]: row for row in page["results"]}
    assert all(set(row) == ROW_FIELDS for row in rows.values())
    assert rows["req_1"]["user"] == "alice" and rows["req_1"]["api_key_prefix"] == ""
    assert rows["req_2"]["user"] is None and rows["req_2"]["api_key_prefix"] == "abcd1234"
    assert rows["req_1"]["confidence"] == 0.8 and rows["req_1"]["tokens_used"] == 150
    assert rows["req_1"]["created_at"].startswith("2026-03-01T09:00:00")


def test_another_tenant_sees_only_its_own(other_admin_client, trail):
    assert ids(other_admin_client.get(AUDIT)) == ["req_5", "req_globex_1"]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"user": "alice"}, ["req_3", "req_1"]),
        ({"user": "bob"}, []),  # another tenant's user
        ({"api_key_prefix": "abcd1234"}, ["req_4", "req_2"]),
        ({"status": "not_found"}, ["req_2"]),
        ({"status": "failed"}, ["req_4"]),
        ({"status": "dry_run"}, ["req_5"]),
        ({"template_id": "house_style"}, ["req_2"]),
        ({"cache_hit": "true"}, ["req_3"]),
        ({"cache_hit": "false"}, ["req_5", "req_4", "req_2", "req_1"]),
        ({"flag": "hallucination_warning"}, ["req_5"]),
        ({"flag": "prompt_injection_detected"}, ["req_5"]),
        ({"flag": "cache_hit"}, ["req_3"]),
        ({"flag": "needs_verification"}, []),
        ({"error_type": "LLMUnavailable"}, ["req_4"]),
        ({"since": "2026-03-01T11:00:00Z"}, ["req_5", "req_4", "req_3"]),
        ({"until": "2026-03-01T11:00:00Z"}, ["req_2", "req_1"]),
        ({"since": "2026-03-01T10:00:00+00:00", "until": "2026-03-01T12:00:00Z"}, ["req_3", "req_2"]),
        ({"request_id": "req_5"}, ["req_5"]),
        ({"request_id": "req_globex_1"}, []),
        ({"conversation_id": "conv_a"}, ["req_2", "req_1"]),
        ({"conversation_id": "conv_a", "user": "alice"}, ["req_1"]),
        ({"since": "2026-03-01T11:00:00Z", "until": "2026-03-01T11:00:00Z"}, []),  # an empty range
        ({"since": "2026-03-02T00:00:00Z", "until": "2026-03-01T00:00:00Z"}, []),
        ({"status": ""}, ["req_5", "req_4", "req_3", "req_2", "req_1"]),  # blank: no filter
    ],
)
def test_filters(admin_client, trail, params, expected):
    assert ids(admin_client.get(AUDIT, params)) == expected


def test_pages(admin_client, trail):
    first = admin_client.get(AUDIT, {"page_size": 2}).json()
    assert first["count"] == 5 and [row["request_id"] for row in first["results"]] == ["req_5", "req_4"]
    assert first["previous"] is None and "page=2" in first["next"]
    third = admin_client.get(AUDIT, {"page_size": 2, "page": 3}).json()
    assert [row["request_id"] for row in third["results"]] == ["req_1"] and third["next"] is None
    assert admin_client.get(AUDIT, {"page": 9}).status_code == 404


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "exploded"}, "status"),
        ({"cache_hit": "maybe"}, "cache_hit"),
        ({"flag": "secret_flag"}, "flag"),
        ({"flag": "invalid_citations"}, "flag"),  # a list, not a true/false flag
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-01T00:00:00Z"}, "until"),
        ({"api_key_prefix": "x" * 9}, "api_key_prefix"),
        ({"request_id": "r" * 65}, "request_id"),
        ({"user": "u" * 151}, "user"),
    ],
)
def test_bad_filter_values_are_400_with_details(admin_client, trail, params, field):
    response = admin_client.get(AUDIT, params)
    assert response.status_code == 400
    assert field in response.json()["details"]


def test_audit_flags_are_the_boolean_flags_a_result_records(tenant):
    ctx = QueryContext(tenant=tenant, question="q", config=QueryConfig.from_options(), request_id="req_x")
    recorded = {name for name, value in flags(ctx).items() if isinstance(value, bool)}
    assert recorded == set(selectors.AUDIT_FLAGS)


def test_audit_search_refuses_an_unknown_flag(tenant):
    with pytest.raises(ValueError, match="unknown audit flag"):
        selectors.audit_search(tenant=tenant, flag="nope")


# --- one row --------------------------------------------------------------------------------------


def test_one_row_has_its_options_and_result(admin_client, trail):
    response = admin_client.get(f"{AUDIT}/req_5")
    assert response.status_code == 200
    row = response.json()
    assert set(row) == ROW_FIELDS | {"options", "result"}
    assert row["options"] == {"top_k": 3} and row["result"] == {"dry_run": True}
    assert row["status"] == "dry_run"  # ours, not the other tenant's row with the same request id


def test_another_tenants_or_a_missing_row_is_404(admin_client, trail):
    for request_id in ("req_globex_1", "req_missing"):
        response = admin_client.get(f"{AUDIT}/{request_id}")
        assert response.status_code == 404 and response.json()["error_type"] == "NotFound"


def test_a_simulation_shows_up_in_the_trail(admin_client, tenant):
    result = admin_client.post(
        "/api/v1/rag/admin/simulate", {"query": "Notice period?"}, format="json"
    ).json()
    listed = admin_client.get(AUDIT, {"status": "dry_run"}).json()["results"]
    assert [row["request_id"] for row in listed] == [result["request_id"]]
    assert listed[0]["user"] is None and listed[0]["api_key_prefix"]
    assert admin_client.get(f"{AUDIT}/{result['request_id']}").json()["result"] == result


# --- roles ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES_BELOW_ADMIN)
def test_below_admin_is_forbidden(tenant, make_key_client, trail, role):
    client = make_key_client(tenant, role)
    for response in (client.get(AUDIT), client.get(f"{AUDIT}/req_1")):
        assert response.status_code == 403 and response.json()["error_type"] == "PermissionDenied"


def test_audit_selectors_stay_within_the_tenant(tenant, other_tenant, trail):
    assert set(selectors.audit_search(tenant=other_tenant).values_list("request_id", flat=True)) == {
        "req_5",
        "req_globex_1",
    }
    assert selectors.audit_get(tenant=other_tenant, request_id="req_5").status == "answered"
    assert selectors.audit_get(tenant=tenant, request_id="req_5").status == "dry_run"
    with pytest.raises(NotFound):
        selectors.audit_get(tenant=tenant, request_id="req_globex_1")
