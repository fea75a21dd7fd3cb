import shutil
import uuid

import pytest

from ragsite.embedded_pg import server
from tests.conftest import PROJECT_ROOT


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
