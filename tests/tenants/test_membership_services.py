"""Members and roles (issue #21): invite by username or e-mail, change role, remove, and the rules
that keep a firm administrable (owner-only grants, no self lock-out, never without an owner)."""

from __future__ import annotations

import re
from smtplib import SMTPException

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from ragsite.exceptions import Conflict, InvalidInput, MailUnavailable, NotFound, PermissionDenied
from tenants.models import Membership, Role
from tenants.services import (
    membership_invitation_resend,
    membership_invite,
    membership_remove,
    membership_role_change,
)
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
BASE_URL = "http://testserver/"
PASSWORD = "correct horse battery staple"


@pytest.fixture
def owner(tenant):
    return MembershipFactory(tenant=tenant, role=Role.OWNER).user


@pytest.fixture
def admin_user(tenant):
    return MembershipFactory(tenant=tenant, role=Role.ADMIN).user


def invite(tenant, identifier, role=Role.MEMBER, by=None):
    return membership_invite(
        tenant=tenant, identifier=identifier, role=role, invited_by=by, base_url=BASE_URL
    )


def invitation_link(message) -> str:
    return re.search(r"http://testserver(/accounts/invitation/\S+/)", message.body).group(1)


# --- Invite -------------------------------------------------------------------------------------


def test_existing_user_is_invited_by_username_without_a_mail(tenant, owner):
    user = UserFactory(username="jdoe")
    membership, mailed = invite(tenant, "jdoe", Role.VIEWER, owner)
    assert (membership.tenant, membership.user, membership.role, mailed) == (tenant, user, Role.VIEWER, False)
    assert mail.outbox == []


def test_existing_user_is_invited_by_email_in_any_case(tenant, admin_user):
    user = UserFactory(email="Jane.Doe@Example.test")
    users_before = get_user_model().objects.count()
    membership, _ = invite(tenant, "  jane.doe@example.TEST ", Role.ADMIN, admin_user)
    assert membership.user == user and membership.role == Role.ADMIN
    assert get_user_model().objects.count() == users_before  # nobody was created


def test_unknown_email_creates_an_account_and_mails_a_working_link(client, tenant, owner):
    membership, mailed = invite(tenant, "new.partner@lawfirm.test", Role.MEMBER, owner)
    user = membership.user
    assert mailed and (user.username, user.email) == ("new.partner@lawfirm.test", "new.partner@lawfirm.test")
    assert not user.has_usable_password()
    [message] = mail.outbox
    assert message.to == ["new.partner@lawfirm.test"] and tenant.name in message.subject
    assert "as member" in message.body and "new.partner@lawfirm.test" in message.body

    form_url = client.get(invitation_link(message), follow=True).redirect_chain[-1][0]
    response = client.post(
        form_url, {"new_password1": "Quiet-Harbour-77", "new_password2": "Quiet-Harbour-77"}
    )
    assert response.status_code == 302
    client.logout()
    assert client.login(username="new.partner@lawfirm.test", password="Quiet-Harbour-77")
    # The link works once.
    again = client.get(invitation_link(message), follow=True)
    assert "no longer valid" in again.content.decode()


def test_unknown_username_is_a_clear_error(tenant, owner):
    with pytest.raises(InvalidInput, match="No account has the username 'ghost'"):
        invite(tenant, "ghost", Role.MEMBER, owner)


@pytest.mark.parametrize("identifier", ["", "   ", "not@an@address"])
def test_blank_or_malformed_identifier_is_invalid(tenant, owner, identifier):
    with pytest.raises(InvalidInput):
        invite(tenant, identifier, Role.MEMBER, owner)
    assert Membership.objects.filter(tenant=tenant).count() == 1 and mail.outbox == []


def test_inviting_a_member_names_their_current_role(tenant, owner):
    member = MembershipFactory(tenant=tenant, role=Role.VIEWER).user
    with pytest.raises(Conflict, match=f"{member.username} is already a member of Acme Law LLP, as viewer"):
        invite(tenant, member.email, Role.ADMIN, owner)


def test_only_an_owner_invites_an_owner(tenant, admin_user, owner):
    UserFactory(username="partner")
    with pytest.raises(PermissionDenied, match="Only an owner"):
        invite(tenant, "partner", Role.OWNER, admin_user)
    assert invite(tenant, "partner", Role.OWNER, owner)[0].role == Role.OWNER


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER])
def test_a_non_admin_cannot_invite(tenant, role):
    actor = MembershipFactory(tenant=tenant, role=role).user
    UserFactory(username="friend")
    with pytest.raises(PermissionDenied):
        invite(tenant, "friend", Role.VIEWER, actor)


def test_an_admin_cannot_invite_into_another_firm(tenant, other_tenant, owner):
    UserFactory(username="friend")
    with pytest.raises(PermissionDenied, match="Globex Legal"):
        invite(other_tenant, "friend", Role.MEMBER, owner)
    assert not Membership.objects.filter(tenant=other_tenant).exists()


def test_unknown_role_is_invalid(tenant, owner):
    UserFactory(username="friend")
    with pytest.raises(InvalidInput, match="Unknown role 'boss'"):
        invite(tenant, "friend", "boss", owner)


def test_a_mail_failure_keeps_nothing(tenant, owner, settings, monkeypatch):
    def refuse(*args, **kwargs):
        raise SMTPException("relay refused")

    monkeypatch.setattr("tenants.invitations.send_mail", refuse)
    with pytest.raises(MailUnavailable, match="nobody was invited"):
        invite(tenant, "someone@lawfirm.test", Role.MEMBER, owner)
    assert not get_user_model().objects.filter(email="someone@lawfirm.test").exists()


def test_a_pending_invitee_invited_elsewhere_gets_a_mail_again(tenant, other_tenant, owner):
    invite(tenant, "pending@lawfirm.test", Role.MEMBER, owner)
    other_owner = MembershipFactory(tenant=other_tenant, role=Role.OWNER).user
    _, mailed = invite(other_tenant, "pending@lawfirm.test", Role.VIEWER, other_owner)
    assert mailed and len(mail.outbox) == 2 and "Globex Legal" in mail.outbox[1].subject


def test_resend_mails_a_fresh_link_only_while_pending(tenant, owner):
    membership, _ = invite(tenant, "late@lawfirm.test", Role.MEMBER, owner)
    membership_invitation_resend(tenant=tenant, membership_id=membership.pk, sent_by=owner, base_url=BASE_URL)
    assert len(mail.outbox) == 2
    membership.user.set_password(PASSWORD)
    membership.user.save()
    with pytest.raises(InvalidInput, match="nothing to resend"):
        membership_invitation_resend(
            tenant=tenant, membership_id=membership.pk, sent_by=owner, base_url=BASE_URL
        )


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
    with pytest.raises(NotFound):
        membership_invitation_resend(
            tenant=tenant, membership_id=foreign.pk, sent_by=owner, base_url=BASE_URL
        )
    foreign.refresh_from_db()
    assert foreign.role == Role.MEMBER


def test_a_member_cannot_change_roles(tenant, owner):
    actor = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    target = MembershipFactory(tenant=tenant, role=Role.VIEWER)
    with pytest.raises(PermissionDenied, match="Only an admin or owner"):
        change(tenant, target, Role.MEMBER, actor)
