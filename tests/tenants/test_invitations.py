"""Invitations need consent (issue #33, item 4): inviting makes a pending invitation, never a
membership; the invitee accepts or declines it (the e-mailed link, or in the app); the inviting
admin learns nothing about whether an account exists; links use SITE_URL, not the Host header."""

from __future__ import annotations

import re
from datetime import timedelta
from smtplib import SMTPException

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone

from ragsite.exceptions import Conflict, InvalidInput, MailUnavailable, NotFound, PermissionDenied
from tenants.invitations import (
    invitation_accept,
    invitation_cancel,
    invitation_create,
    invitation_decline,
    invitation_resend,
)
from tenants.models import Invitation, InvitationStatus, Membership, Role
from tenants.selectors import invitation_list_for_user
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
SITE = "https://lexrag.example.test"  # SITE_URL in the test settings
PASSWORD = "correct horse battery staple"


def invite(tenant, identifier, role=Role.MEMBER, by=None):
    return invitation_create(tenant=tenant, identifier=identifier, role=role, invited_by=by)


def link_path(message) -> str:
    return re.search(re.escape(SITE) + r"(/accounts/invitations/\S+/)", message.body).group(1)


def is_member(tenant, user) -> bool:
    return Membership.objects.filter(tenant=tenant, user=user).exists()


# --- Consent --------------------------------------------------------------------------------


def test_inviting_an_existing_account_adds_nobody_until_they_accept_in_the_app(tenant, other_tenant, owner):
    victim = UserFactory(username="jdoe")
    MembershipFactory(tenant=other_tenant, user=victim)
    invitation = invite(tenant, "jdoe", Role.VIEWER, owner)
    assert not is_member(tenant, victim)
    assert (invitation.status, invitation.user) == (InvitationStatus.PENDING, victim)
    [message] = mail.outbox  # to the account's own address, with a link on the configured site
    assert message.to == ["jdoe@example.test"] and link_path(message)
    assert list(invitation_list_for_user(user=victim)) == [invitation]

    membership = invitation_accept(invitation_id=invitation.pk, user=victim)
    assert (membership.tenant, membership.role) == (tenant, Role.VIEWER)
    invitation.refresh_from_db()
    assert invitation.status == InvitationStatus.ACCEPTED
    assert list(invitation_list_for_user(user=victim)) == []


def test_an_existing_account_by_email_in_any_case_creates_no_account(tenant, admin_user):
    user = UserFactory(email="Jane.Doe@Example.test")
    users_before = get_user_model().objects.count()
    invitation = invite(tenant, "  jane.doe@example.TEST ", Role.ADMIN, admin_user)
    assert (invitation.identifier, invitation.user) == ("jane.doe@example.test", user)
    assert get_user_model().objects.count() == users_before and not is_member(tenant, user)


def test_declining_leaves_no_membership_and_kills_the_link(client, tenant, owner):
    user = UserFactory(username="partner")
    invitation = invite(tenant, "partner", Role.MEMBER, owner)
    invitation_decline(invitation_id=invitation.pk, user=user)
    assert not is_member(tenant, user)
    client.force_login(user)
    assert client.get(link_path(mail.outbox[0])).status_code == 404
    with pytest.raises(NotFound):
        invitation_accept(invitation_id=invitation.pk, user=user)


def test_only_the_invited_account_answers_in_the_app(tenant, owner):
    invited, stranger = UserFactory(username="invited"), UserFactory(username="stranger")
    invitation = invite(tenant, "invited", Role.ADMIN, owner)
    for answer in (invitation_accept, invitation_decline):
        with pytest.raises(NotFound):
            answer(invitation_id=invitation.pk, user=stranger)
    assert not is_member(tenant, stranger) and list(invitation_list_for_user(user=stranger)) == []
    assert invitation_accept(invitation_id=invitation.pk, user=invited).role == Role.ADMIN


def test_the_link_of_an_account_refuses_another_signed_in_account(client, tenant, owner):
    UserFactory(username="invited")
    stranger = UserFactory(username="stranger")
    invite(tenant, "invited", Role.MEMBER, owner)
    client.force_login(stranger)
    response = client.post(link_path(mail.outbox[0]), {"answer": "accept"})
    assert response.status_code == 403 and "another account" in response.content.decode()
    assert not is_member(tenant, stranger)


def test_a_newcomer_chooses_a_password_with_the_link_and_joins(client, tenant, owner):
    invite(tenant, "new.partner@lawfirm.test", Role.MEMBER, owner)
    assert not get_user_model().objects.filter(email="new.partner@lawfirm.test").exists()
    [message] = mail.outbox
    assert message.to == ["new.partner@lawfirm.test"] and tenant.name in message.subject
    path = link_path(message)
    page = client.get(path)
    assert "Create my account and accept" in page.content.decode()
    response = client.post(path, {"new_password1": "Quiet-Harbour-77", "new_password2": "Quiet-Harbour-77"})
    assert response.status_code == 302
    user = get_user_model().objects.get(username="new.partner@lawfirm.test")
    assert is_member(tenant, user) and client.get("/cases/").status_code == 200
    client.logout()
    assert client.login(username="new.partner@lawfirm.test", password="Quiet-Harbour-77")
    assert client.get(path).status_code == 404  # the link works once


def test_the_link_asks_an_existing_account_to_sign_in_then_accepts(client, tenant, owner):
    user = UserFactory(email="partner@lawfirm.test")
    invite(tenant, "partner@lawfirm.test", Role.VIEWER, owner)
    path = link_path(mail.outbox[0])
    assert "Sign in</a> to accept" in client.get(path).content.decode()
    assert not is_member(tenant, user)
    client.force_login(user)
    assert client.get(path).status_code == 200 and not is_member(tenant, user)  # GET changes nothing
    assert client.post(path, {"answer": "accept"}).status_code == 302
    assert Membership.objects.get(tenant=tenant, user=user).role == Role.VIEWER


def test_in_app_the_user_sees_and_answers_their_invitations(client, tenant, other_tenant, owner):
    user = UserFactory(username="partner")
    first = invite(tenant, "partner", Role.MEMBER, owner)
    other_owner = MembershipFactory(tenant=other_tenant, role=Role.OWNER).user
    second = invite(other_tenant, "partner", Role.VIEWER, other_owner)
    client.force_login(user)
    page = client.get("/accounts/firms/").content.decode()
    assert "Acme Law LLP" in page and "Globex Legal" in page
    assert client.post(f"/accounts/invitations/{first.pk}/accept").status_code == 302
    assert client.post(f"/accounts/invitations/{second.pk}/decline").status_code == 302
    assert is_member(tenant, user) and not is_member(other_tenant, user)
    assert client.post(f"/accounts/invitations/{second.pk}/accept").status_code == 404


# --- The same reply for every identifier ----------------------------------------------------


@pytest.mark.parametrize(
    "identifier",
    ["partner", "ghost", "inactive", "partner@lawfirm.test", "nobody@lawfirm.test", "shared@lawfirm.test"],
)
def test_every_identifier_gets_the_same_pending_invitation(tenant, owner, identifier):
    UserFactory(username="partner", email="partner@lawfirm.test")
    UserFactory(username="inactive", is_active=False)
    UserFactory(email="shared@lawfirm.test"), UserFactory(email="shared@lawfirm.test")
    invitation = invite(tenant, identifier, Role.MEMBER, owner)
    assert (invitation.identifier, invitation.status, invitation.role) == (identifier, "pending", "member")
    assert Membership.objects.filter(tenant=tenant).count() == 1
    if "@" in identifier:  # every address is mailed, used or not
        assert [message.to for message in mail.outbox] == [[identifier]]


def test_a_mail_failure_for_an_address_keeps_nothing_and_for_a_username_is_not_told(
    tenant, owner, monkeypatch
):
    def refuse(*args, **kwargs):
        raise SMTPException("relay refused")

    monkeypatch.setattr("tenants.invitations.send_mail", refuse)
    with pytest.raises(MailUnavailable, match="nobody was invited"):
        invite(tenant, "someone@lawfirm.test", Role.MEMBER, owner)
    assert not Invitation.objects.filter(identifier="someone@lawfirm.test").exists()
    UserFactory(username="partner")
    assert invite(tenant, "partner", Role.MEMBER, owner).status == "pending"  # as for "ghost"


@pytest.mark.parametrize("identifier", ["", "   ", "not@an@address"])
def test_blank_or_malformed_identifier_is_invalid(tenant, owner, identifier):
    with pytest.raises(InvalidInput):
        invite(tenant, identifier, Role.MEMBER, owner)
    assert not Invitation.objects.exists() and mail.outbox == []


def test_inviting_a_member_names_their_current_role(tenant, owner):
    member = MembershipFactory(tenant=tenant, role=Role.VIEWER).user
    with pytest.raises(Conflict, match=f"{member.username} is already a member of Acme Law LLP, as viewer"):
        invite(tenant, member.email, Role.ADMIN, owner)


# --- Who may invite -------------------------------------------------------------------------


def test_only_an_owner_invites_an_owner(tenant, admin_user, owner):
    with pytest.raises(PermissionDenied, match="Only an owner"):
        invite(tenant, "partner", Role.OWNER, admin_user)
    assert invite(tenant, "partner", Role.OWNER, owner).role == Role.OWNER


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER])
def test_a_non_admin_cannot_invite(tenant, role):
    actor = MembershipFactory(tenant=tenant, role=role).user
    with pytest.raises(PermissionDenied):
        invite(tenant, "friend", Role.VIEWER, actor)


def test_an_admin_cannot_invite_into_another_firm(tenant, other_tenant, owner):
    with pytest.raises(PermissionDenied, match="Globex Legal"):
        invite(other_tenant, "friend", Role.MEMBER, owner)
    assert not Invitation.objects.filter(tenant=other_tenant).exists()


def test_unknown_role_is_invalid(tenant, owner):
    with pytest.raises(InvalidInput, match="Unknown role 'boss'"):
        invite(tenant, "friend", "boss", owner)


# --- Lifecycle ------------------------------------------------------------------------------


def test_resend_gives_a_fresh_link_and_the_old_one_stops(client, tenant, owner):
    invitation = invite(tenant, "late@lawfirm.test", Role.MEMBER, owner)
    invitation_resend(tenant=tenant, invitation_id=invitation.pk, sent_by=owner)
    old, new = (link_path(message) for message in mail.outbox)
    assert client.get(old).status_code == 404 and client.get(new).status_code == 200


def test_reinviting_replaces_the_pending_invitation(tenant, owner):
    first = invite(tenant, "late@lawfirm.test", Role.MEMBER, owner)
    second = invite(tenant, "LATE@lawfirm.test", Role.VIEWER, owner)
    first.refresh_from_db()
    assert (first.status, second.status) == ("cancelled", "pending")


def test_cancelled_and_expired_invitations_cannot_be_accepted(client, tenant, owner):
    user = UserFactory(username="partner")
    cancelled = invite(tenant, "partner", Role.MEMBER, owner)
    invitation_cancel(tenant=tenant, invitation_id=cancelled.pk, cancelled_by=owner)
    expired = invite(tenant, "partner", Role.MEMBER, owner)
    Invitation.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    for invitation in (cancelled, expired):
        with pytest.raises(NotFound):
            invitation_accept(invitation_id=invitation.pk, user=user)
    assert client.get(link_path(mail.outbox[1])).status_code == 404
    assert not is_member(tenant, user)


def test_another_firms_invitation_cannot_be_resent_or_cancelled(tenant, other_tenant, owner):
    other_owner = MembershipFactory(tenant=other_tenant, role=Role.OWNER).user
    foreign = invite(other_tenant, "someone@lawfirm.test", Role.MEMBER, other_owner)
    for write in (invitation_resend, invitation_cancel):
        with pytest.raises(NotFound):
            write(
                tenant=tenant,
                invitation_id=foreign.pk,
                **{"sent_by" if write is invitation_resend else "cancelled_by": owner},
            )
    foreign.refresh_from_db()
    assert foreign.status == "pending" and len(mail.outbox) == 1


def test_links_use_the_site_url_never_the_host_header(client, tenant, owner, settings):
    settings.ALLOWED_HOSTS = ["*"]
    client.force_login(owner)
    client.post(
        "/manage/tenants/invitation/add/",
        {"identifier": "newcomer@lawfirm.test", "role": "member"},
        HTTP_HOST="attacker.example",
    )
    [message] = mail.outbox
    assert f"{SITE}/accounts/invitations/" in message.body and "attacker.example" not in message.body
