"""Property-based API tests from the OpenAPI schema (schemathesis): for every documented operation,
generated requests (valid and invalid) never get a 5xx, and every response — status code, content
type, headers and body — matches what /api/schema/ documents.

Runs in-process against the WSGI app and the real test database, as an admin of a tenant with a
small corpus, so generated requests reach every endpoint's code (not just its 401)."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis import checks

from tenants.models import Role

pytestmark = pytest.mark.slow

# Operations whose generated requests would do slow work many times over (each upload starts an
# ingestion; each query runs the pipeline): fewer examples, same checks.
EXAMPLES = 20


def _load_schema():
    """The schema /api/schema/ serves, generated the same way (no request needed at import)."""
    from drf_spectacular.generators import SchemaGenerator

    loaded = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
    loaded.app = get_wsgi_application()  # requests go to the app in-process (WSGI)
    return loaded


schema = _load_schema()


_current_key: dict[str, str] = {}


@schema.auth(refresh_interval=None)
class AdminApiKey:
    """The test's admin key, given the way schemathesis knows about (so its auth checks can send
    a wrong key instead and expect 401)."""

    def get(self, case, context):
        return _current_key.get("key", "not-yet-created")  # asked once at collection, too

    def set(self, case, data, context):
        case.headers = {**(case.headers or {}), "Authorization": f"Api-Key {data}"}


@pytest.fixture
def admin_key(corpus, make_key_client, tenant):
    _current_key["key"] = make_key_client(tenant, Role.ADMIN).raw_key
    yield
    _current_key.clear()


@pytest.fixture
def in_process_requests(db):
    # The test transaction must survive each request: Django's own test client disconnects these too.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_conforms_to_the_schema(case, in_process_requests, admin_key):
    # Every check but two that would flag deliberate leniency and strictness the schema cannot
    # express: "a schema-valid request is accepted" (rules across fields, such as a date range's
    # order, the question's token count or a whitespace-only text, are a 400) and "a schema-invalid
    # request is refused" (a blank query parameter means "no filter", as an empty form field does).
    # Each endpoint's own tests cover its bad input.
    case.call_and_validate(excluded_checks=[checks.positive_data_acceptance, checks.negative_data_rejection])
