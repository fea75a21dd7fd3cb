"""Selectors never return another tenant's rows; missing and foreign are the same NotFound."""

import pytest

from ragsite.exceptions import NotFound
from tenants import selectors, services
from tenants.models import ApiKey, Membership, Role
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_api_key_list_is_scoped(tenant, other_tenant):
    mine, _ = services.api_key_create(tenant=tenant, name="mine", created_via="test")
    services.api_key_create(tenant=other_tenant, name="theirs", created_via="test")
    assert list(selectors.api_key_list(tenant=tenant)) == [mine]


def test_api_key_get_of_another_tenant_is_not_found(tenant, other_tenant):
    theirs, _ = services.api_key_create(tenant=other_tenant, name="theirs", created_via="test")
    with pytest.raises(NotFound) as missing:
        selectors.api_key_get(tenant=tenant, key_id=10**9)
    with pytest.raises(NotFound) as foreign:
        selectors.api_key_get(tenant=tenant, key_id=theirs.pk)
    assert str(missing.value) == str(foreign.value)
    assert selectors.api_key_get(tenant=other_tenant, key_id=theirs.pk) == theirs


@pytest.mark.parametrize("bad_id", ["abc", None, "1; DROP TABLE tenants_apikey"])
def test_malformed_ids_are_not_found(tenant, bad_id):
    with pytest.raises(NotFound):
        selectors.api_key_get(tenant=tenant, key_id=bad_id)


def test_membership_selectors_are_scoped(tenant, other_tenant):
    user = UserFactory()
    MembershipFactory(tenant=other_tenant, user=user, role=Role.ADMIN)
    MembershipFactory(tenant=tenant)
    assert [m.tenant for m in selectors.membership_list(tenant=tenant)] == [tenant]
    with pytest.raises(NotFound):
        selectors.membership_get(tenant=tenant, user=user)
    assert selectors.membership_get(tenant=other_tenant, user=user).role == Role.ADMIN


def test_owned_list_refuses_to_run_without_a_tenant():
    with pytest.raises(ValueError, match="tenant is required"):
        Membership.objects.for_tenant(None)


def test_inactive_tenants_disappear_from_a_users_choices(tenant, other_tenant):
    user = UserFactory()
    MembershipFactory(tenant=tenant, user=user)
    MembershipFactory(tenant=other_tenant, user=user)
    other_tenant.is_active = False
    other_tenant.save()
    assert [m.tenant for m in selectors.membership_list_for_user(user=user)] == [tenant]


def test_tenant_get_by_slug(tenant):
    assert selectors.tenant_get_by_slug(slug="acme-law") == tenant
    with pytest.raises(NotFound):
        selectors.tenant_get_by_slug(slug="nobody")


def test_api_key_stores_only_a_hash(tenant):
    api_key, raw_key = services.api_key_create(tenant=tenant, name="k", created_via="test")
    secret = raw_key.split("_", 2)[2]
    stored = ApiKey.objects.get(pk=api_key.pk)
    assert secret not in stored.hashed_secret and len(stored.hashed_secret) == 64
    assert raw_key.startswith(f"lx_{stored.prefix}_")


def test_api_key_find_by_prefix_loads_the_key_and_its_tenant_like_the_orm(tenant, other_tenant):
    tenant.settings = {"retention": {"days": 30}, "note": "ünïcode"}
    tenant.save()
    services.api_key_create(tenant=other_tenant, name="theirs", created_via="test")
    mine, _ = services.api_key_create(tenant=tenant, name="mine", role=Role.VIEWER, created_via="test")
    found = selectors.api_key_find_by_prefix(prefix=mine.prefix)
    expected = ApiKey.objects.select_related("tenant").get(pk=mine.pk)
    assert found is not None and not found._state.adding
    assert [getattr(found, f.attname) for f in ApiKey._meta.concrete_fields] == [
        getattr(expected, f.attname) for f in ApiKey._meta.concrete_fields
    ]
    assert found.tenant == tenant
    assert found.tenant.settings == {"retention": {"days": 30}, "note": "ünïcode"}  # JSON parsed
    assert found.tenant.created_at == expected.tenant.created_at


def test_api_key_find_by_prefix_of_an_unknown_or_hostile_prefix_is_none(tenant):
    services.api_key_create(tenant=tenant, name="mine", created_via="test")
    assert selectors.api_key_find_by_prefix(prefix="zzzzzzzz") is None
    assert selectors.api_key_find_by_prefix(prefix="' OR 1=1 --") is None
