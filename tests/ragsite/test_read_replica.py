"""Search on read replicas: a real hot standby of a real primary, made to lag, then stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

from ragsite.embedded_pg import server

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATABASE = "lexrag_replica_test"


def _url(status: server.ServerStatus) -> str:
    return f"postgres://postgres@/{DATABASE}?host={quote(str(status.socket_dir))}"


@pytest.fixture
def primary_and_replica(tmp_path_factory):
    """A fresh embedded primary holding an empty database, and its streaming replica."""
    root = tmp_path_factory.mktemp("replication")
    primary_dir, replica_dir = root / "primary", root / "replica"
    primary = server.ensure_running(primary_dir)
    with psycopg.connect(
        host=str(primary.socket_dir), user="postgres", dbname="postgres", autocommit=True
    ) as db:
        db.execute(f'CREATE DATABASE "{DATABASE}"')
    replica = server.ensure_replica(primary_dir, replica_dir)
    try:
        yield primary, replica
    finally:
        server.stop(replica_dir)
        server.stop(primary_dir)


@pytest.mark.integration
@pytest.mark.slow
def test_search_reads_a_fresh_replica_and_never_shows_what_the_primary_withholds(primary_and_replica):
    primary, replica = primary_and_replica
    env = {
        **os.environ,
        "DATABASE_URL": _url(primary),
        "DATABASE_REPLICA_URLS": _url(replica),
        "REPLICA_DATA_DIR": str(replica.data_dir),
        "DJANGO_SETTINGS_MODULE": "ragsite.settings.test",
        "DATABASE_REPLICA_RETRY_SECONDS": "600",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "tests.ragsite.replica_scenario"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])

    # Caught up: both documents found, the scans ran on the replica (more than its version check).
    assert seen["fresh_files"] == ["lease.txt", "supply.txt"]
    assert seen["fresh_replica_statements"] > 2
    # Replay paused, then the lease made confidential: the replica does not know yet, so the
    # firm is searched on the primary (the replica ran only its version check), without the lease.
    assert seen["replica_not_confidential"] is True
    assert seen["behind_files"] == ["supply.txt"]
    assert seen["behind_replica_statements"] <= 2
    # Another firm, whose corpus the replica holds up to date, is still searched there.
    assert seen["other_files"] and set(seen["other_files"]) <= {"license.txt", "services.txt"}
    assert seen["other_replica_statements"] > 2
    # A scan of the stale copy found the lease; the check on the primary dropped it, kept the rest.
    assert seen["stale_scan_had_lease"] is True
    assert seen["confirmed_has_lease"] is False
    assert seen["confirmed_kept_others"] is True
    # Replay resumed: back on the replica, and the replica now withholds the lease itself.
    assert seen["resumed_files"] == ["supply.txt"]
    assert seen["resumed_replica_statements"] > 2
    # The replica down: the same search is answered from the primary alike; the replica is set aside.
    assert seen["down_files"] == seen["other_files"]
    assert seen["down_set_aside"] is True
