"""A tenant sees its own templates and the built-ins it has not overridden; another tenant's
template is the same NotFound as a missing one."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ragsite.exceptions import NotFound
from templates_admin import selectors, services
from templates_admin.builtins import BUILTIN_TEMPLATE_IDS

pytestmark = pytest.mark.django_db

BALANCED = "legal_analysis_balanced"


def test_get_returns_the_builtin_without_an_override(tenant):
    template = selectors.template_get(tenant=tenant, template_id=BALANCED)
    assert template.is_builtin and template.template_id == BALANCED


def test_tenant_override_wins_over_the_builtin_in_one_query(tenant, other_tenant, make_template):
    mine = make_template(tenant, template_id=BALANCED, name="Our balanced")
    with CaptureQueriesContext(connection) as queries:
        assert selectors.template_get(tenant=tenant, template_id=BALANCED) == mine
    assert len(queries) == 1
    assert selectors.template_get(tenant=other_tenant, template_id=BALANCED).is_builtin


def test_another_tenants_template_is_not_found(tenant, other_tenant, make_template):
    make_template(other_tenant, template_id="theirs")
    with pytest.raises(NotFound) as foreign:
        selectors.template_get(tenant=tenant, template_id="theirs")
    with pytest.raises(NotFound) as missing:
        selectors.template_get(tenant=tenant, template_id="nobody")
    assert str(foreign.value) == str(missing.value)
    assert selectors.template_get(tenant=other_tenant, template_id="theirs").tenant == other_tenant


def test_list_shadows_overridden_builtins(tenant, other_tenant, make_template):
    mine = make_template(tenant, template_id=BALANCED)
    own = make_template(tenant, template_id="a_first")
    make_template(other_tenant, template_id="theirs")
    listed = list(selectors.template_list(tenant=tenant))
    assert [t.template_id for t in listed] == sorted(["a_first", *BUILTIN_TEMPLATE_IDS])
    assert listed[0] == own
    assert [t for t in listed if t.template_id == BALANCED] == [mine]
    others = list(selectors.template_list(tenant=other_tenant))
    assert [t.template_id for t in others] == sorted(["theirs", *BUILTIN_TEMPLATE_IDS])
    assert next(t for t in others if t.template_id == BALANCED).is_builtin


def test_version_list_of_another_tenants_template_is_not_found(tenant, other_tenant, make_template):
    make_template(other_tenant, template_id="theirs")
    with pytest.raises(NotFound):
        selectors.template_version_list(tenant=tenant, template_id="theirs")
    services.template_update(tenant=other_tenant, template_id="theirs", data={"name": "v2"})
    versions = selectors.template_version_list(tenant=other_tenant, template_id="theirs")
    assert [v.version for v in versions] == [2, 1]


def test_selectors_refuse_to_run_without_a_tenant():
    with pytest.raises(ValueError, match="tenant is required"):
        selectors.template_get(tenant=None, template_id=BALANCED)
