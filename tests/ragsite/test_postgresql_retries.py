"""Connection-level database failures are retried with exponential backoff, then 503 (spec:
"Connection timeout: Retry up to 3 times with exponential backoff"), against the real embedded
PostgreSQL behind a proxy that drops the first connections."""

from __future__ import annotations

import time

import pytest
from django.db import OperationalError, connection

from ragsite.postgresql.base import DatabaseWrapper
from ragsite.postgresql.retry import is_connection_failure
from tenants.models import Role
from tests.ragsite.conftest import connection_settings
from tests.ragsite.pg_proxy import DroppingProxy


def wrapper_through(proxy: DroppingProxy, **overrides) -> DatabaseWrapper:
    """A ragsite.postgresql connection to the `postgres` database through `proxy`."""
    data_dir = connection.settings_dict["DATA_DIR"]
    settings_dict = connection_settings(data_dir, engine="ragsite.postgresql")
    settings_dict.update(HOST="127.0.0.1", PORT=str(proxy.port), **overrides)
    return DatabaseWrapper(settings_dict, alias="retry-probe")


def select_one(wrapper: DatabaseWrapper) -> int:
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone()[0]
    finally:
        wrapper.close()


def test_dropped_first_connections_are_retried_with_exponential_backoff(proxy, django_db_blocker):
    proxy.drop_first = 3
    started = time.monotonic()
    with django_db_blocker.unblock():
        assert select_one(wrapper_through(proxy)) == 1
    elapsed = time.monotonic() - started
    assert proxy.accepted == 4  # three dropped, the fourth answered
    assert 0.7 <= elapsed < 3, elapsed  # waited 0.1 + 0.2 + 0.4 s between the attempts


def test_after_the_configured_retries_the_connection_error_is_raised(proxy, django_db_blocker, settings):
    settings.VECTOR_STORE_RETRIES = 2
    settings.VECTOR_STORE_RETRY_BACKOFF_SECONDS = 0.05
    proxy.drop_first = 10
    started = time.monotonic()
    with django_db_blocker.unblock(), pytest.raises(OperationalError) as raised:
        select_one(wrapper_through(proxy))
    assert proxy.accepted == 3  # the attempt and two retries
    assert time.monotonic() - started >= 0.15
    assert is_connection_failure(raised.value)


def test_a_refused_login_is_not_retried(proxy, django_db_blocker):
    with django_db_blocker.unblock(), pytest.raises(OperationalError) as raised:
        select_one(wrapper_through(proxy, USER="no_such_role"))
    assert 'role "no_such_role" does not exist' in str(raised.value)
    assert proxy.accepted == 1
    assert not is_connection_failure(raised.value)


def test_a_statement_timeout_is_a_query_error_and_a_cut_connection_is_not(proxy, django_db_blocker):
    with django_db_blocker.unblock():
        wrapper = wrapper_through(proxy)
        with wrapper.cursor() as cursor:
            cursor.execute("SET statement_timeout = 50")
            with pytest.raises(OperationalError) as timed_out:
                cursor.execute("SELECT pg_sleep(2)")
        assert not is_connection_failure(timed_out.value)
        proxy.sever()
        with pytest.raises(OperationalError) as cut, wrapper.cursor() as cursor:
            cursor.execute("SELECT 1")
        assert is_connection_failure(cut.value)
        wrapper.close()


def test_a_query_request_survives_three_dropped_connections(tenant, make_key_client, default_db_through):
    client = make_key_client(tenant, Role.VIEWER)
    connection.close()
    before = default_db_through.accepted  # making the key connected once
    default_db_through.drop_first = 3
    response = client.post("/api/v1/rag/query", {"query": "What is the notice period?"}, format="json")
    assert response.status_code == 200, response.json()
    assert default_db_through.accepted - before == 4  # three dropped, the fourth answered


def test_a_query_request_is_503_once_the_retries_are_spent(tenant, make_key_client, default_db_through):
    client = make_key_client(tenant, Role.VIEWER)
    connection.close()
    before = default_db_through.accepted
    default_db_through.drop_first = 100
    response = client.post("/api/v1/rag/query", {"query": "What is the notice period?"}, format="json")
    assert response.status_code == 503
    assert response.json()["error_type"] == "VectorStoreUnavailable"
    assert default_db_through.accepted - before == 4  # the attempt and three retries
