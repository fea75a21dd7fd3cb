"""Credentials follow people (issue #33, item 5): every key records who or what made it; a key
never outranks its maker; removing, demoting or the leaving of its person revokes or caps it."""

from __future__ import annotations

import pytest
from django.db import IntegrityError
from rest_framework.test import APIClient

from ragsite.exceptions import PermissionDenied
from tenants.models import ApiKey, Role
from tenants.services import api_key_create, membership_leave, membership_remove, membership_role_change
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

KEYS = "/api/v1/tenants/api-keys"
AUDIT = "/api/v1/rag/admin/audit"


def key_client(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
    return client


def session_key(user, name="integration", role=Role.ADMIN) -> tuple[ApiKey, APIClient]:
    """A key `user` makes through the REST API with their session, and a client using it."""
    session = APIClient()
    session.force_login(user)
    body = session.post(KEYS, {"name": name, "role": role}, format="json").json()
    return ApiKey.objects.get(pk=body["id"]), key_client(body["key"])


def test_every_key_records_who_or_what_made_it(tenant, admin_user):
    made_by_person, admin_client = session_key(admin_user)
    assert (made_by_person.created_by, made_by_person.created_by_key, made_by_person.created_via) == (
        admin_user,
        None,
        "api",
    )
    body = admin_client.post(KEYS, {"name": "made by a key", "role": "viewer"}, format="json").json()
    assert (body["created_by"], body["created_by_key"], body["created_via"]) == (
        admin_user.username,
        made_by_person.prefix,
        "api",
    )
    made_by_key = ApiKey.objects.get(pk=body["id"])
    assert (made_by_key.created_by, made_by_key.created_by_key) == (admin_user, made_by_person)
    with pytest.raises(ValueError, match="created_via"):
        api_key_create(tenant=tenant, name="anonymous", created_via="")
    with pytest.raises(IntegrityError):
        ApiKey.objects.create(tenant=tenant, name="raw", prefix="abcdefgh", hashed_secret="x" * 64)


@pytest.mark.parametrize(("maker", "refused"), [(Role.VIEWER, Role.MEMBER), (Role.MEMBER, Role.ADMIN)])
def test_a_key_cannot_make_a_key_above_its_own_role(tenant, maker, refused):
    parent, _ = api_key_create(tenant=tenant, name="parent", role=maker, created_via="test")
    with pytest.raises(PermissionDenied, match=f"cannot create a key with the {refused} role"):
        api_key_create(tenant=tenant, name="child", role=refused, created_by_key=parent, created_via="api")
    child, _ = api_key_create(
        tenant=tenant, name="child", role=maker, created_by_key=parent, created_via="api"
    )
    assert child.role == maker


def test_a_person_cannot_make_a_key_above_their_role_or_in_another_firm(tenant, other_tenant):
    member = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    with pytest.raises(PermissionDenied):
        api_key_create(tenant=tenant, name="k", role=Role.ADMIN, created_by=member, created_via="test")
    with pytest.raises(PermissionDenied):
        api_key_create(tenant=other_tenant, name="k", role=Role.VIEWER, created_by=member, created_via="test")
    assert not ApiKey.objects.exists()


def test_a_removed_admins_keys_and_the_keys_they_made_are_refused(tenant, owner, admin_user):
    _, admin_key = session_key(admin_user)
    child = admin_key.post(KEYS, {"name": "child", "role": "member"}, format="json").json()
    child_client = key_client(child["key"])
    assert admin_key.get(AUDIT).status_code == 200
    membership = admin_user.memberships.get(tenant=tenant)
    membership_remove(tenant=tenant, membership_id=membership.pk, removed_by=owner)
    for client in (admin_key, child_client):
        for response in (client.get(AUDIT), client.post(KEYS, {"name": "again"}, format="json")):
            assert response.status_code == 401 and response.json()["error_type"] == "AuthenticationFailed"
    assert ApiKey.objects.filter(tenant=tenant, revoked_at__isnull=True, created_by=admin_user).count() == 0


def test_a_demoted_admins_keys_are_capped_to_their_new_role(tenant, owner, admin_user):
    admin_key, admin_client = session_key(admin_user, role=Role.ADMIN)
    viewer_key, _ = session_key(admin_user, name="reader", role=Role.VIEWER)
    owners_key, _ = session_key(owner, name="owner's", role=Role.ADMIN)
    membership = admin_user.memberships.get(tenant=tenant)
    membership_role_change(tenant=tenant, membership_id=membership.pk, role=Role.MEMBER, changed_by=owner)
    for key in (admin_key, viewer_key, owners_key):
        key.refresh_from_db()
    assert (admin_key.role, viewer_key.role, owners_key.role) == (Role.MEMBER, Role.VIEWER, Role.ADMIN)
    response = admin_client.get(KEYS)
    assert response.status_code == 403 and response.json()["error_type"] == "PermissionDenied"


def test_leaving_or_deleting_the_account_revokes_its_keys(tenant, other_tenant, owner):
    leaver = MembershipFactory(tenant=tenant, role=Role.ADMIN).user
    MembershipFactory(tenant=other_tenant, user=leaver, role=Role.ADMIN)
    here, _ = api_key_create(
        tenant=tenant, name="here", role=Role.ADMIN, created_by=leaver, created_via="test"
    )
    there, _ = api_key_create(
        tenant=other_tenant, name="there", role=Role.ADMIN, created_by=leaver, created_via="test"
    )
    membership_leave(tenant=tenant, user=leaver)
    here.refresh_from_db(), there.refresh_from_db()
    assert here.is_revoked and not there.is_revoked  # only the firm they left
    leaver.delete()  # the operator deletes the account: its memberships go, and its keys stop
    there.refresh_from_db()
    assert there.is_revoked
