"""GET/POST /admin/ranking/weights: the tenant's weights and where they come from; set, normalize
and reset; bad values change nothing; tenants never see or change each other's; admins only."""

from __future__ import annotations

import math

import pytest

from rag import selectors
from rag.models import RankingWeights
from rag.retrieval.ranking import Weights
from tests.api.conftest_admin import ROLES_BELOW_ADMIN, session_admin

__all__ = ["session_admin"]  # fixtures, imported for pytest

pytestmark = pytest.mark.django_db

WEIGHTS = "/api/v1/rag/admin/ranking/weights"
SPEC_EXAMPLE = {"similarity_weight": 0.6, "recency_weight": 0.3, "trust_weight": 0.1}
FIELDS = {
    "similarity_weight",
    "recency_weight",
    "trust_weight",
    "version",
    "source",
    "updated_at",
    "updated_by",
}


def test_without_own_weights_the_settings_apply(admin_client, settings):
    settings.RAG_SIMILARITY_WEIGHT, settings.RAG_RECENCY_WEIGHT, settings.RAG_TRUST_WEIGHT = 0.5, 0.25, 2.0
    response = admin_client.get(WEIGHTS)
    assert response.status_code == 200
    assert response.json() == {
        "similarity_weight": 0.5,
        "recency_weight": 0.25,
        "trust_weight": 2.0,
        "version": 0,
        "source": "settings",
        "updated_at": None,
        "updated_by": None,
    }


def test_setting_the_spec_example(admin_client, tenant):
    response = admin_client.post(WEIGHTS, SPEC_EXAMPLE, format="json")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == FIELDS
    assert {name: body[name] for name in SPEC_EXAMPLE} == SPEC_EXAMPLE
    assert (body["version"], body["source"], body["updated_by"]) == (1, "tenant", None)
    assert body["updated_at"]
    assert admin_client.get(WEIGHTS).json() == body
    assert selectors.ranking_weights_get(tenant=tenant) == Weights(similarity=0.6, recency=0.3, trust=0.1)


def test_every_write_bumps_the_version(admin_client):
    admin_client.post(WEIGHTS, SPEC_EXAMPLE, format="json")
    body = admin_client.post(WEIGHTS, {**SPEC_EXAMPLE, "trust_weight": 10}, format="json").json()
    assert body["version"] == 2 and body["trust_weight"] == 10.0


def test_a_session_user_is_named(session_admin):
    client, user = session_admin
    assert client.post(WEIGHTS, SPEC_EXAMPLE, format="json").json()["updated_by"] == user.username


def test_normalize_scales_to_sum_one_keeping_proportions(admin_client, tenant):
    body = admin_client.post(
        WEIGHTS,
        {"similarity_weight": 6, "recency_weight": 3, "trust_weight": 1, "normalize": True},
        format="json",
    ).json()
    values = [body["similarity_weight"], body["recency_weight"], body["trust_weight"]]
    assert math.isclose(sum(values), 1.0)
    assert [round(value, 9) for value in values] == [0.6, 0.3, 0.1]
    row = RankingWeights.objects.get(tenant=tenant)
    assert math.isclose(row.similarity_weight, 0.6)


def test_without_normalize_values_are_kept_as_given(admin_client):
    body = admin_client.post(
        WEIGHTS, {"similarity_weight": 6, "recency_weight": 3, "trust_weight": 1}, format="json"
    )
    assert [body.json()[name] for name in ("similarity_weight", "recency_weight", "trust_weight")] == [
        6,
        3,
        1,
    ]


def test_reset_goes_back_to_the_settings_values_with_a_new_version(admin_client, settings):
    admin_client.post(
        WEIGHTS, {"similarity_weight": 1, "recency_weight": 1, "trust_weight": 1}, format="json"
    )
    response = admin_client.post(WEIGHTS, {"reset": True}, format="json")
    assert response.status_code == 200
    body = response.json()
    expected = [settings.RAG_SIMILARITY_WEIGHT, settings.RAG_RECENCY_WEIGHT, settings.RAG_TRUST_WEIGHT]
    assert [body["similarity_weight"], body["recency_weight"], body["trust_weight"]] == expected
    assert body["version"] == 2  # kept and bumped, so caches of the custom weights go stale


def test_reset_without_own_weights_changes_nothing(admin_client):
    body = admin_client.post(WEIGHTS, {"reset": True}, format="json").json()
    assert (body["source"], body["version"]) == ("settings", 0)
    assert not RankingWeights.objects.exists()


def test_tenants_never_see_or_change_each_others_weights(admin_client, other_admin_client, tenant):
    admin_client.post(WEIGHTS, SPEC_EXAMPLE, format="json")
    theirs = other_admin_client.get(WEIGHTS).json()
    assert (theirs["source"], theirs["version"]) == ("settings", 0)
    other_admin_client.post(
        WEIGHTS, {"similarity_weight": 2, "recency_weight": 0, "trust_weight": 0}, format="json"
    )
    other_admin_client.post(WEIGHTS, {"reset": True}, format="json")
    mine = admin_client.get(WEIGHTS).json()
    assert ({name: mine[name] for name in SPEC_EXAMPLE}, mine["version"]) == (SPEC_EXAMPLE, 1)


@pytest.mark.parametrize(
    ("payload", "fields"),
    [
        ({**SPEC_EXAMPLE, "similarity_weight": -0.1}, {"similarity_weight"}),
        ({**SPEC_EXAMPLE, "recency_weight": 10.5}, {"recency_weight"}),
        ({**SPEC_EXAMPLE, "trust_weight": "NaN"}, {"trust_weight"}),
        ({**SPEC_EXAMPLE, "trust_weight": "Infinity"}, {"trust_weight"}),
        ({**SPEC_EXAMPLE, "similarity_weight": "0.6"}, {"similarity_weight"}),
        ({**SPEC_EXAMPLE, "similarity_weight": "high"}, {"similarity_weight"}),
        ({**SPEC_EXAMPLE, "similarity_weight": True}, {"similarity_weight"}),
        ({**SPEC_EXAMPLE, "similarity_weight": None}, {"similarity_weight"}),
        ({**SPEC_EXAMPLE, "similarity_weight": [0.6]}, {"similarity_weight"}),
        ({"similarity_weight": 0.6}, {"recency_weight", "trust_weight"}),
        ({}, {"similarity_weight", "recency_weight", "trust_weight"}),
        ({"similarity_weight": 0, "recency_weight": 0, "trust_weight": 0}, {"__all__"}),
        ({"similarity_weight": 0, "recency_weight": 0, "trust_weight": 0, "normalize": True}, {"__all__"}),
        ({**SPEC_EXAMPLE, "reset": True}, {"similarity_weight", "recency_weight", "trust_weight"}),
        ({**SPEC_EXAMPLE, "normalize": "maybe"}, {"normalize"}),
        ({"reset": "please"}, {"reset"}),
    ],
)
def test_bad_values_are_400_with_field_details_and_change_nothing(admin_client, payload, fields):
    admin_client.post(
        WEIGHTS, {"similarity_weight": 1, "recency_weight": 2, "trust_weight": 3}, format="json"
    )
    response = admin_client.post(WEIGHTS, payload, format="json")
    assert response.status_code == 400, response.json()
    assert set(response.json()["details"]) == fields
    after = admin_client.get(WEIGHTS).json()
    assert (after["version"], after["similarity_weight"], after["trust_weight"]) == (1, 1, 3)


def test_a_number_too_large_for_a_float_is_400(admin_client):
    body = '{"similarity_weight": 1e400, "recency_weight": 0.3, "trust_weight": 0.1}'  # parses as inf
    response = admin_client.post(WEIGHTS, body, content_type="application/json")
    assert response.status_code == 400 and "similarity_weight" in response.json()["details"]
    assert not RankingWeights.objects.exists()


def test_a_nan_literal_is_not_json(admin_client):
    body = '{"similarity_weight": NaN, "recency_weight": 0.3, "trust_weight": 0.1}'
    response = admin_client.post(WEIGHTS, body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error_type"] == "ParseError"
    assert not RankingWeights.objects.exists()


def test_a_body_for_another_tenant_is_refused(admin_client, other_tenant):
    response = admin_client.post(WEIGHTS, {**SPEC_EXAMPLE, "tenant_id": other_tenant.slug}, format="json")
    assert response.status_code == 403
    assert not RankingWeights.objects.exists()


@pytest.mark.parametrize("role", ROLES_BELOW_ADMIN)
def test_below_admin_is_forbidden(tenant, make_key_client, role):
    client = make_key_client(tenant, role)
    for response in (client.get(WEIGHTS), client.post(WEIGHTS, SPEC_EXAMPLE, format="json")):
        assert response.status_code == 403 and response.json()["error_type"] == "PermissionDenied"
    assert not RankingWeights.objects.exists()


def test_ranking_weights_row_is_the_tenants_own(tenant, other_tenant, admin_client):
    assert selectors.ranking_weights_row(tenant=tenant) is None
    admin_client.post(WEIGHTS, SPEC_EXAMPLE, format="json")
    assert selectors.ranking_weights_row(tenant=tenant).tenant == tenant
    assert selectors.ranking_weights_row(tenant=other_tenant) is None
