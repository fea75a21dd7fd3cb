"""docker/smoke.py, the check of a started stack (docs/deployment.md), run as a deployer runs it:
a separate process speaking HTTP to a served Lexrag whose uploads and async jobs a real Celery
worker takes. It must pass on a working stack and fail, naming the check, on a broken one."""

import subprocess
import sys

import pytest

from tenants import services as tenant_services
from tenants.models import Role
from tests.api.test_worker_metrics import metrics_dir  # noqa: F401 (a fixture)
from tests.conftest import PROJECT_ROOT
from tests.factories import TenantFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def smoke(url: str, key: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "docker" / "smoke.py"), "--url", url, "--api-key", key],
        capture_output=True,
        text=True,
        timeout=600,
    )


def admin_key() -> str:
    tenant = TenantFactory(slug="smoke-firm")
    _, raw_key = tenant_services.api_key_create(
        tenant=tenant, name="smoke", role=Role.ADMIN, created_via="test"
    )
    return raw_key


@pytest.fixture
def warm():
    """The served process's models loaded, so its health check says ready (as after start-up)."""
    from rag import warmup

    warmup.warm_query_models()


# metrics_dir first: the worker must start with the shared metrics directory in its environment.
def test_the_smoke_check_passes_on_a_served_stack(metrics_dir, celery_worker, live_server, warm):  # noqa: F811
    ran = smoke(live_server.url, admin_key())
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert all(line.startswith("ok ") for line in lines)
    assert any("ingested by the workers" in line for line in lines)
    assert any("first citation is the distributor agreement" in line for line in lines)
    assert any("counted in the tenant's metrics" in line for line in lines)


def test_the_smoke_check_fails_naming_what_failed(live_server, warm):
    ran = smoke(live_server.url, "lx_not_a_key")
    assert ran.returncode == 1
    assert ran.stdout.splitlines()[-1].startswith("FAIL case created")
