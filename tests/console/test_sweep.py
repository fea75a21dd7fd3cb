"""The isolation sweep (issue #21, item 2): for every model admin registered on the tenant site,
with two firms, nothing of the other firm shows in any view, and no write path reaches it.

It iterates over the site's registry and each admin's own URL patterns and actions, so a model
admin (or an extra view, or an action) added later is covered without editing this file; a model
without a maker in `conftest.MAKERS` fails the sweep."""

from __future__ import annotations

import pytest
from django.forms.models import model_to_dict

from console.urls import site

from .conftest import ADD_DATA, MAKERS, OTHER_MARKER, OWN_MARKER

pytestmark = pytest.mark.django_db

REGISTRY = sorted(site._registry.items(), key=lambda item: item[0]._meta.label)


def _base_url(model) -> str:
    return f"/manage/{model._meta.app_label}/{model._meta.model_name}/"


def _text(response) -> str:
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def _state(model, pk):
    row = model._base_manager.filter(pk=pk).first()
    return None if row is None else model_to_dict(row)


def _object_patterns(model_admin) -> list[str]:
    """Every URL pattern of the admin that names one object, e.g. "<path:object_id>/history/"."""
    return [str(p.pattern) for p in model_admin.get_urls() if "<path:object_id>" in str(p.pattern)]


def _list_patterns(model_admin) -> list[str]:
    """Every other URL pattern (change list, add, exports and any extra view)."""
    return [str(p.pattern) for p in model_admin.get_urls() if "<" not in str(p.pattern)]


def test_every_registered_model_has_a_maker():
    assert REGISTRY, "the tenant site registers no model admin"
    missing = [model._meta.label for model, _ in REGISTRY if model not in MAKERS]
    assert not missing, f"add a maker for {missing} to tests/console/conftest.py"


@pytest.mark.parametrize(("model", "model_admin"), REGISTRY, ids=lambda v: getattr(v, "__name__", ""))
def test_other_firm_is_invisible_in_every_view(console, tenant, other_tenant, model, model_admin):
    own, other = MAKERS[model](tenant, OWN_MARKER), MAKERS[model](other_tenant, OTHER_MARKER)
    base = _base_url(model)

    changelist = console.get(base)
    assert changelist.status_code == 200
    shown = {row.pk for row in changelist.context["cl"].result_list}
    assert own.pk in shown and other.pk not in shown
    for pattern in _list_patterns(model_admin):
        response = console.get(base + pattern, follow=True)
        assert response.status_code < 500, pattern
        assert OTHER_MARKER not in _text(response), pattern
    for pattern in _object_patterns(model_admin):
        own_url, other_url = (
            base + pattern.replace("<path:object_id>", str(pk)) for pk in (own.pk, other.pk)
        )
        assert console.get(own_url, follow=True).status_code in (200, 403), own_url
        assert console.get(other_url, follow=True).status_code == 404, other_url
    for field_name in model_admin.autocomplete_fields:
        response = console.get(
            "/manage/autocomplete/",
            {
                "app_label": model._meta.app_label,
                "model_name": model._meta.model_name,
                "field_name": field_name,
            },
        )
        assert OTHER_MARKER not in _text(response), field_name


@pytest.mark.parametrize(("model", "model_admin"), REGISTRY, ids=lambda v: getattr(v, "__name__", ""))
def test_no_write_path_reaches_the_other_firm(console, tenant, other_tenant, model, model_admin):
    MAKERS[model](tenant, OWN_MARKER)
    other = MAKERS[model](other_tenant, OTHER_MARKER)
    before = _state(model, other.pk)
    base = _base_url(model)

    for pattern in _object_patterns(model_admin):  # change, delete and any extra object view
        url = base + pattern.replace("<path:object_id>", str(other.pk))
        assert console.post(url, {"post": "yes", "name": "hijacked"}, follow=True).status_code == 404, url
    action_form = console.get(base).context["action_form"]  # None when the admin has no action
    actions = [name for name, _ in action_form.fields["action"].choices if name] if action_form else []
    for action in actions:
        response = console.post(
            base, {"action": action, "_selected_action": [other.pk], "index": 0, "post": "yes"}
        )
        assert OTHER_MARKER not in _text(response), action
    assert _state(model, other.pk) == before
    assert model._base_manager.filter(tenant=other_tenant).count() == 1


@pytest.mark.parametrize(("model", "model_admin"), REGISTRY, ids=lambda v: getattr(v, "__name__", ""))
def test_add_with_a_forged_tenant_gets_the_active_tenant(console, tenant, other_tenant, model, model_admin):
    if model not in ADD_DATA:
        assert console.get(_base_url(model) + "add/").status_code == 403, "add allowed: give ADD_DATA"
        return
    before = model._base_manager.filter(tenant=tenant).count()  # memberships: the firm's owner
    response = console.post(_base_url(model) + "add/", {**ADD_DATA[model], "tenant": other_tenant.pk})
    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    assert model._base_manager.filter(tenant=other_tenant).count() == 0
    assert model._base_manager.filter(tenant=tenant).count() == before + 1
