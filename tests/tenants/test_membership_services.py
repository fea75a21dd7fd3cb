"""Members and roles (issue #21): change role, remove, leave, and the rules that keep a firm
administrable (owner-only grants, no self lock-out, never without an owner). Invitations are in
test_invitations.py."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from ragsite.exceptions import Conflict, NotFound, PermissionDenied
from tenants.models import Membership, Role
from tenants.services import membership_leave, membership_remove, membership_role_change
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


# --- Change role and remove ---------------------------------------------------------------------


def change(tenant, membership, role, by):
    return membership_role_change(tenant=tenant, membership_id=membership.pk, role=role, changed_by=by)


def remove(tenant, membership, by):
    return membership_remove(tenant=tenant, membership_id=membership.pk, removed_by=by)


def test_admin_changes_a_members_role_but_cannot_grant_owner(tenant, admin_user):
    member = MembershipFactory(tenant=tenant, role=Role.VIEWER)
    assert change(tenant, member, Role.ADMIN, admin_user).role == Role.ADMIN
    member.refresh_from_db()
    assert member.role == Role.ADMIN
    with pytest.raises(PermissionDenied, match="make someone an owner"):
        change(tenant, member, Role.OWNER, admin_user)
    member.refresh_from_db()
    assert member.role == Role.ADMIN


def assert_neither_changed_nor_removed(tenant, membership, actor, error, match):
    role = membership.role
    with pytest.raises(error, match=match):
        change(tenant, membership, Role.VIEWER, actor)
    with pytest.raises(error, match=match):
        remove(tenant, membership, actor)
    membership.refresh_from_db()  # DoesNotExist if it was removed
    assert membership.role == role


def test_admin_cannot_touch_an_owner(tenant, owner, admin_user):
    owner_membership = Membership.objects.get(tenant=tenant, user=owner)
    match = "Only an owner can change or remove an owner"
    assert_neither_changed_nor_removed(tenant, owner_membership, admin_user, PermissionDenied, match)


def test_admin_cannot_change_or_remove_themselves(tenant, admin_user):
    own = Membership.objects.get(tenant=tenant, user=admin_user)
    assert_neither_changed_nor_removed(tenant, own, admin_user, PermissionDenied, "your own role")


def test_the_last_owner_can_be_neither_demoted_nor_removed(tenant, owner):
    own = Membership.objects.get(tenant=tenant, user=owner)
    assert_neither_changed_nor_removed(tenant, own, owner, Conflict, "last owner of Acme Law LLP")


def test_with_a_second_owner_an_owner_may_step_down_and_the_other_may_not(tenant, owner):
    second = MembershipFactory(tenant=tenant, role=Role.MEMBER)
    change(tenant, second, Role.OWNER, owner)
    own = Membership.objects.get(tenant=tenant, user=owner)
    assert change(tenant, own, Role.ADMIN, owner).role == Role.ADMIN
    second.refresh_from_db()
    with pytest.raises(Conflict, match="last owner"):
        remove(tenant, second, second.user)


def test_owner_removes_a_member_and_their_account_stays(tenant, owner):
    member = MembershipFactory(tenant=tenant, role=Role.MEMBER)
    remove(tenant, member, owner)
    assert not Membership.objects.filter(pk=member.pk).exists()
    assert get_user_model().objects.filter(pk=member.user_id).exists()


def test_another_firms_membership_is_not_found(tenant, other_tenant, owner):
    foreign = MembershipFactory(tenant=other_tenant, role=Role.MEMBER)
    with pytest.raises(NotFound):
        change(tenant, foreign, Role.VIEWER, owner)
    with pytest.raises(NotFound):
        remove(tenant, foreign, owner)
    foreign.refresh_from_db()
    assert foreign.role == Role.MEMBER


def test_a_member_cannot_change_roles(tenant, owner):
    actor = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    target = MembershipFactory(tenant=tenant, role=Role.VIEWER)
    with pytest.raises(PermissionDenied, match="Only an admin or owner"):
        change(tenant, target, Role.MEMBER, actor)


# --- Leave -------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER, Role.ADMIN])
def test_a_member_leaves_a_firm_and_their_account_and_other_firms_stay(tenant, other_tenant, owner, role):
    membership = MembershipFactory(tenant=tenant, role=role)
    elsewhere = MembershipFactory(tenant=other_tenant, user=membership.user)
    membership_leave(tenant=tenant, user=membership.user)
    assert not Membership.objects.filter(pk=membership.pk).exists()
    assert Membership.objects.filter(pk=elsewhere.pk).exists()
    assert get_user_model().objects.filter(pk=membership.user_id).exists()


def test_the_last_owner_cannot_leave_but_one_of_two_owners_can(tenant, owner):
    with pytest.raises(Conflict, match="last owner"):
        membership_leave(tenant=tenant, user=owner)
    second = MembershipFactory(tenant=tenant, role=Role.OWNER).user
    membership_leave(tenant=tenant, user=owner)
    assert list(Membership.objects.filter(tenant=tenant).values_list("user", flat=True)) == [second.pk]


def test_one_cannot_leave_a_firm_one_is_not_in(tenant, other_tenant, owner):
    with pytest.raises(NotFound):
        membership_leave(tenant=other_tenant, user=owner)
