"""The bundled PostgreSQL 18 + pgvector: init, concurrent start, reuse, stop, the vector extension."""

import subprocess
import sys

import psycopg
import pytest
from django.db import connection

from ragsite.embedded_pg import server
from tests.conftest import PROJECT_ROOT
from tests.ragsite.conftest import connection_settings

START_SCRIPT = (
    "import sys; from ragsite.embedded_pg import server; print(server.ensure_running(sys.argv[1]).pid)"
)


def _connect(data_dir, dbname="postgres"):
    return psycopg.connect(
        host=str(server.socket_dir_for(data_dir)), user=server.SUPERUSER, dbname=dbname, autocommit=True
    )


@pytest.mark.slow
def test_concurrent_starts_share_one_server_with_pgvector(scratch_pg_dir):
    # Three processes race to initialise and start the same, not yet existing, data directory.
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", START_SCRIPT, str(scratch_pg_dir)],
            cwd=PROJECT_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    results = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0], [err for _, err in results]
    pids = {out.strip() for out, _ in results}
    assert len(pids) == 1, f"expected one server, got pids {pids}"

    # A later start reuses the running server.
    assert str(server.ensure_running(scratch_pg_dir).pid) in pids

    with _connect(scratch_pg_dir) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        server_version = conn.execute("SHOW server_version").fetchone()[0]
        distance = conn.execute("SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector").fetchone()[0]
    assert version.startswith("0.8")
    assert server_version.startswith("18")
    assert distance == pytest.approx(1.0)


@pytest.mark.slow
def test_stop_then_start_again(scratch_pg_dir):
    first = server.ensure_running(scratch_pg_dir)
    assert server.stop(scratch_pg_dir) is True
    assert server.status(scratch_pg_dir).running is False
    with pytest.raises(psycopg.OperationalError):
        _connect(scratch_pg_dir).close()
    assert server.stop(scratch_pg_dir) is False  # stopping twice is harmless

    second = server.ensure_running(scratch_pg_dir)
    assert second.running and second.pid != first.pid
    with _connect(scratch_pg_dir) as conn:
        assert conn.execute("SELECT 1").fetchone()[0] == 1


def test_status_of_uninitialised_directory(tmp_path):
    state = server.status(tmp_path / "never-created")
    assert state.running is False and state.pid is None


def test_long_data_dir_gets_a_short_socket_dir(tmp_path):
    deep = tmp_path.joinpath(*["a-rather-long-directory-name"] * 6) / "pgdata"
    socket_dir = server.socket_dir_for(deep)
    assert len(str(socket_dir / ".s.PGSQL.5432")) < 107
    assert socket_dir == server.socket_dir_for(deep)  # deterministic: every process finds it


def test_first_migration_created_the_vector_extension(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    assert row is not None and row[0].startswith("0.8")


def test_missing_database_is_created_on_first_connection(scratch_pg_dir, django_db_blocker):
    """The backend creates its configured database the first time it connects."""
    from ragsite.embedded_pg.base import DatabaseWrapper

    server.ensure_running(scratch_pg_dir)
    settings_dict = connection_settings(scratch_pg_dir, engine="ragsite.embedded_pg", name="fresh_db")
    wrapper = DatabaseWrapper(settings_dict, alias="fresh")
    try:
        with django_db_blocker.unblock(), wrapper.cursor() as cursor:
            cursor.execute("SELECT current_database()")
            assert cursor.fetchone()[0] == "fresh_db"
    finally:
        wrapper.close()
