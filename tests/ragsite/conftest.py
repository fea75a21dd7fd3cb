import shutil
import uuid

import pytest

from ragsite.embedded_pg import server
from tests.conftest import PROJECT_ROOT
from tests.rag.llm.conftest import start_server  # noqa: F401  (a fake Ollama for settings tests)
from tests.ragsite.pg_proxy import default_db_through, proxy  # noqa: F401  (fixtures)


@pytest.fixture(scope="session")
def scratch_pg_dir():
    """A data directory for a throw-away embedded server (under var/, which the server user can
    reach; pytest's own tmp dirs are private to root). Stopped and removed afterwards."""
    data_dir = PROJECT_ROOT / "var" / f"test-pg-{uuid.uuid4().hex[:8]}"
    yield data_dir
    server.stop(data_dir)
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.rmtree(server.socket_dir_for(data_dir), ignore_errors=True)
    (data_dir.parent / f".{data_dir.name}.lock").unlink(missing_ok=True)


def connection_settings(
    data_dir, *, engine: str = "django.db.backends.postgresql", name: str = "postgres"
) -> dict:
    """A complete Django DATABASES entry for the embedded server on `data_dir`."""
    return {
        "ENGINE": engine,
        "NAME": name,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(server.socket_dir_for(data_dir)),
        "PORT": "",
        "DATA_DIR": str(data_dir),
        "OPTIONS": {"connect_timeout": 2},
        "TIME_ZONE": None,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": False,
        "AUTOCOMMIT": True,
        "ATOMIC_REQUESTS": False,
        "TEST": {},
    }
