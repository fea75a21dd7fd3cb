"""Per-tenant ranking weights: selector defaults, the set/reset services, versions, tenant isolation
and the admin."""

from __future__ import annotations

import math

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from rag import selectors, services
from rag.models import RankingWeights
from rag.retrieval.ranking import Weights
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def set_weights(tenant, similarity, recency, trust, **kwargs) -> RankingWeights:
    return services.ranking_weights_set(
        tenant=tenant,
        similarity_weight=similarity,
        recency_weight=recency,
        trust_weight=trust,
        **kwargs,
    )


# --- selectors ----------------------------------------------------------------------------------


def test_a_tenant_without_a_row_ranks_with_the_settings(tenant, settings):
    assert selectors.ranking_weights_get(tenant=tenant) == Weights(similarity=0.7, recency=0.2, trust=0.1)
    settings.RAG_SIMILARITY_WEIGHT, settings.RAG_RECENCY_WEIGHT, settings.RAG_TRUST_WEIGHT = 0.5, 0.0, 3.0
    assert selectors.ranking_weights_get(tenant=tenant) == Weights(similarity=0.5, recency=0.0, trust=3.0)
    assert selectors.ranking_weights_version(tenant=tenant) == 0


def test_a_tenant_with_a_row_ranks_with_its_own_weights(tenant, settings):
    set_weights(tenant, 1.0, 0.5, 0.25)
    settings.RAG_SIMILARITY_WEIGHT = 9.0  # the settings no longer matter to this tenant
    assert selectors.ranking_weights_get(tenant=tenant) == Weights(similarity=1.0, recency=0.5, trust=0.25)
    assert selectors.ranking_weights_version(tenant=tenant) == 1


def test_tenants_never_see_each_others_weights(tenant, other_tenant):
    set_weights(tenant, 2.0, 0.0, 1.0)

    assert selectors.ranking_weights_get(tenant=other_tenant) == Weights.from_settings()
    assert selectors.ranking_weights_version(tenant=other_tenant) == 0

    set_weights(other_tenant, 0.1, 0.1, 0.1)
    set_weights(other_tenant, 0.3, 0.3, 0.3)

    assert selectors.ranking_weights_get(tenant=tenant) == Weights(similarity=2.0, recency=0.0, trust=1.0)
    assert selectors.ranking_weights_version(tenant=tenant) == 1
    assert selectors.ranking_weights_version(tenant=other_tenant) == 2
    assert RankingWeights.objects.count() == 2


def test_selectors_refuse_an_unsaved_tenant():
    from tenants.models import Tenant

    with pytest.raises(ValueError, match="saved tenant"):
        selectors.ranking_weights_get(tenant=Tenant(slug="ghost", name="Ghost"))


# --- set ----------------------------------------------------------------------------------------


def test_set_creates_one_row_then_updates_it_with_a_higher_version(tenant):
    user = UserFactory()
    first = set_weights(tenant, 0.6, 0.3, 0.1, updated_by=user)
    assert first.version == 1
    assert first.updated_by == user

    second = set_weights(tenant, 0.9, 0.0, 0.1)
    assert second.pk == first.pk
    assert second.version == 2
    assert second.updated_by is None
    assert second.updated_at >= first.updated_at

    # Unchanged values still count as a change: callers asked for a write.
    assert set_weights(tenant, 0.9, 0.0, 0.1).version == 3

    stored = RankingWeights.objects.get(tenant=tenant)
    assert (stored.similarity_weight, stored.recency_weight, stored.trust_weight, stored.version) == (
        0.9,
        0.0,
        0.1,
        3,
    )


def test_set_converts_numeric_strings_like_a_form_would(tenant):
    row = set_weights(tenant, "1.5", 0, "0.25")
    assert (row.similarity_weight, row.recency_weight, row.trust_weight) == (1.5, 0.0, 0.25)


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ((-0.1, 0.2, 0.1), "similarity_weight"),
        ((0.7, 10.01, 0.1), "recency_weight"),
        ((0.7, 0.2, math.nan), "trust_weight"),
        ((math.inf, 0.2, 0.1), "similarity_weight"),
        ((0.7, "lots", 0.1), "recency_weight"),
        ((0.7, 0.2, None), "trust_weight"),
        ((0, 0.0, 0), "__all__"),
    ],
)
def test_set_refuses_bad_weights_and_changes_nothing(tenant, values, field):
    set_weights(tenant, 1.0, 1.0, 1.0)

    with pytest.raises(ValidationError) as excinfo:
        set_weights(tenant, *values)

    assert field in excinfo.value.message_dict
    stored = RankingWeights.objects.get(tenant=tenant)
    assert (stored.similarity_weight, stored.recency_weight, stored.trust_weight, stored.version) == (
        1.0,
        1.0,
        1.0,
        1,
    )


def test_a_refused_first_set_leaves_no_row(tenant):
    with pytest.raises(ValidationError, match="At least one ranking weight"):
        set_weights(tenant, 0, 0, 0)
    assert not RankingWeights.objects.filter(tenant=tenant).exists()
    assert selectors.ranking_weights_version(tenant=tenant) == 0


def test_weights_at_the_bounds_are_accepted(tenant):
    row = set_weights(tenant, 10, 0, 0)
    assert selectors.ranking_weights_get(tenant=tenant) == Weights(similarity=10.0, recency=0.0, trust=0.0)
    assert row.version == 1


# --- reset --------------------------------------------------------------------------------------


def test_reset_without_a_row_changes_nothing(tenant):
    assert services.ranking_weights_reset(tenant=tenant) is None
    assert not RankingWeights.objects.filter(tenant=tenant).exists()
    assert selectors.ranking_weights_version(tenant=tenant) == 0


def test_reset_restores_the_settings_and_keeps_the_version_rising(tenant, other_tenant, settings):
    set_weights(tenant, 5.0, 5.0, 5.0)
    set_weights(other_tenant, 2.0, 2.0, 2.0)
    settings.RAG_SIMILARITY_WEIGHT, settings.RAG_RECENCY_WEIGHT, settings.RAG_TRUST_WEIGHT = 0.8, 0.1, 0.1

    row = services.ranking_weights_reset(tenant=tenant)

    assert row.version == 2
    assert selectors.ranking_weights_get(tenant=tenant) == Weights(similarity=0.8, recency=0.1, trust=0.1)
    assert selectors.ranking_weights_version(tenant=tenant) == 2
    # A later set must not reuse a version an earlier set had (caches key on it).
    assert set_weights(tenant, 5.0, 5.0, 5.0).version == 3
    # The other tenant is untouched.
    assert selectors.ranking_weights_get(tenant=other_tenant) == Weights(
        similarity=2.0, recency=2.0, trust=2.0
    )
    assert selectors.ranking_weights_version(tenant=other_tenant) == 1


# --- admin --------------------------------------------------------------------------------------


def test_admin_add_goes_through_the_service(admin_client, admin_user, tenant):
    response = admin_client.get(reverse("admin:rag_rankingweights_add"))
    assert response.status_code == 200
    assert response.context["adminform"].form.initial["similarity_weight"] == 0.7  # the settings

    response = admin_client.post(
        reverse("admin:rag_rankingweights_add"),
        {"tenant": tenant.pk, "similarity_weight": "0.5", "recency_weight": "0.4", "trust_weight": "0.3"},
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    row = RankingWeights.objects.get(tenant=tenant)
    assert (row.similarity_weight, row.recency_weight, row.trust_weight) == (0.5, 0.4, 0.3)
    assert row.version == 1
    assert row.updated_by == admin_user


def test_admin_change_bumps_the_version_and_keeps_the_tenant(admin_client, admin_user, tenant, other_tenant):
    row = set_weights(tenant, 0.7, 0.2, 0.1)
    url = reverse("admin:rag_rankingweights_change", args=[row.pk])

    page = admin_client.get(url)
    assert page.status_code == 200
    assert "version" not in page.context["adminform"].form.fields  # shown, not editable

    response = admin_client.post(
        url,
        {
            "tenant": other_tenant.pk,  # read-only on change: ignored
            "similarity_weight": "1",
            "recency_weight": "0",
            "trust_weight": "0.5",
            "version": "99",  # read-only: ignored
        },
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    row.refresh_from_db()
    assert (row.tenant_id, row.similarity_weight, row.recency_weight, row.trust_weight) == (
        tenant.pk,
        1.0,
        0.0,
        0.5,
    )
    assert row.version == 2
    assert row.updated_by == admin_user
    assert not RankingWeights.objects.filter(tenant=other_tenant).exists()


def test_admin_refuses_all_zero_weights_and_a_second_row(admin_client, tenant):
    row = set_weights(tenant, 0.7, 0.2, 0.1)

    response = admin_client.post(
        reverse("admin:rag_rankingweights_change", args=[row.pk]),
        {"similarity_weight": "0", "recency_weight": "0", "trust_weight": "0"},
    )
    assert response.status_code == 200
    assert (
        "At least one ranking weight must be greater than 0."
        in response.context["adminform"].form.errors["__all__"]
    )

    response = admin_client.post(
        reverse("admin:rag_rankingweights_add"),
        {"tenant": tenant.pk, "similarity_weight": "1", "recency_weight": "1", "trust_weight": "1"},
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["tenant"] == [
        "Ranking weights with this Tenant already exists."
    ]

    row.refresh_from_db()
    assert (row.similarity_weight, row.version) == (0.7, 1)
    assert RankingWeights.objects.filter(tenant=tenant).count() == 1


def test_admin_list_shows_the_version(admin_client, tenant):
    set_weights(tenant, 0.7, 0.2, 0.1)
    set_weights(tenant, 0.6, 0.2, 0.1)
    response = admin_client.get(reverse("admin:rag_rankingweights_changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    assert '<td class="field-version">2</td>' in response.content.decode()


def test_admin_cannot_delete_but_can_reset_to_the_settings(admin_client, admin_user, tenant, other_tenant):
    row = set_weights(tenant, 5.0, 5.0, 5.0)
    other = set_weights(other_tenant, 4.0, 4.0, 4.0)

    delete = admin_client.get(reverse("admin:rag_rankingweights_delete", args=[row.pk]))
    assert delete.status_code == 403

    response = admin_client.post(
        reverse("admin:rag_rankingweights_changelist"),
        {"action": "reset_to_settings", "_selected_action": [row.pk]},
    )

    assert response.status_code == 302
    row.refresh_from_db()
    assert (row.similarity_weight, row.recency_weight, row.trust_weight) == (0.7, 0.2, 0.1)
    assert row.version == 2
    assert row.updated_by == admin_user
    other.refresh_from_db()
    assert (other.similarity_weight, other.version) == (4.0, 1)


def test_normalize_scales_valid_weights_to_sum_one(tenant):
    row = set_weights(tenant, 6, 3, 1, normalize=True)
    assert math.isclose(row.similarity_weight + row.recency_weight + row.trust_weight, 1.0)
    assert math.isclose(row.similarity_weight, 0.6) and math.isclose(row.trust_weight, 0.1)


@pytest.mark.parametrize("values", [(0, 0, 0), (-1, 2, 0), (20, 0, 0)])
def test_normalize_never_rescues_invalid_weights(tenant, values):
    """Values are checked as given: normalizing 20/0/0 would be valid, but 20 is over the maximum."""
    with pytest.raises(ValidationError):
        set_weights(tenant, *values, normalize=True)
    assert not RankingWeights.objects.exists()
