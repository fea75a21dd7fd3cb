"""Read routing: only a `reading_from` block reads elsewhere; a replica that fails is set aside.
(A real lagging replica: test_read_replica.py.)"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from rag.models import Document
from rag.retrieval import replica
from rag.retrieval.hits import Hit
from ragsite.db_routers import SearchReplicaRouter, current_read_alias, reading_from
from tenants.models import Tenant

router = SearchReplicaRouter()


def test_reads_leave_the_primary_only_inside_a_reading_from_block():
    assert router.db_for_read(Document) == DEFAULT_DB_ALIAS
    with reading_from("replica_1"):
        assert router.db_for_read(Document) == "replica_1"
        assert router.db_for_write(Document) == DEFAULT_DB_ALIAS
    assert current_read_alias() == DEFAULT_DB_ALIAS
    with pytest.raises(RuntimeError), reading_from("replica_1"):
        raise RuntimeError("a search failed")
    assert current_read_alias() == DEFAULT_DB_ALIAS


def test_only_the_primary_is_migrated():
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "rag")
    assert not router.allow_migrate("replica_1", "rag")


def test_without_replicas_the_search_runs_once_on_the_primary(tenant):
    calls = []

    def search(scope):
        calls.append(current_read_alias())
        return [Hit(chunk_id=1, document_id=1, score=1.0)]

    (hits,), alias = replica.searched_on_replica(search, [None], tenant=tenant, index_version=3)
    assert (alias, calls, [hit.chunk_id for hit in hits]) == (DEFAULT_DB_ALIAS, [DEFAULT_DB_ALIAS], [1])


@pytest.fixture
def unreachable_replica(monkeypatch, tmp_path):
    """replica_1: a real connection setting whose server is not there (no socket in the folder)."""
    config = {**settings.DATABASES[DEFAULT_DB_ALIAS], "ENGINE": "django.db.backends.postgresql"}
    config.update(HOST=str(tmp_path), PORT="", OPTIONS={"connect_timeout": 1}, TEST={})
    monkeypatch.setitem(settings.DATABASES, "replica_1", config)
    configured = connections.configure_settings(
        {DEFAULT_DB_ALIAS: connections.settings[DEFAULT_DB_ALIAS], "replica_1": config}
    )
    connections.settings["replica_1"] = configured["replica_1"]
    replica.forget_failures()
    yield
    connections["replica_1"].close()
    del connections["replica_1"]
    del connections.settings["replica_1"]
    replica.forget_failures()


def test_a_replica_that_does_not_answer_is_set_aside_and_the_primary_searched(
    unreachable_replica, django_db_blocker
):
    """No test database: the search is a stand-in; what is real is connecting to the replica."""
    tenant = Tenant(pk=1, slug="acme-law")
    calls = []

    def search(scope):
        calls.append(current_read_alias())
        return []

    assert replica.replica_aliases() == ["replica_1"]
    with django_db_blocker.unblock():
        _, alias = replica.searched_on_replica(search, [None], tenant=tenant, index_version=0)
    assert (alias, calls) == (DEFAULT_DB_ALIAS, [DEFAULT_DB_ALIAS])
    assert replica._set_aside_now("replica_1")
    # Set aside: the next search does not wait for it again.
    _, alias = replica.searched_on_replica(search, [None], tenant=tenant, index_version=0)
    assert alias == DEFAULT_DB_ALIAS and calls == [DEFAULT_DB_ALIAS, DEFAULT_DB_ALIAS]
