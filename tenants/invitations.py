"""Invitations: joining a firm needs the invitee's consent.

A firm's admin invites a username or an e-mail address; that makes a pending `Invitation`, never a
membership. The invitee accepts or declines it with the e-mailed link (`/accounts/invitations/<token>/`,
which also lets a newcomer choose a password) or, when it names their account, in the app
(`/accounts/firms/`). Until then the firm sees only "pending invitation for <what the admin typed>".

Nothing tells the inviting admin whether an account exists: every well-formed identifier gets the
same pending invitation and the same reply (an address is mailed whether or not anyone uses it; a
username's account, if any, is mailed at its own address). Links are built from `SITE_URL`, never
from the request's Host header.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from smtplib import SMTPException

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from ragsite.exceptions import Conflict, InvalidInput, MailUnavailable, NotFound, PermissionDenied

from . import selectors
from .models import Invitation, InvitationStatus, Membership, Tenant
from .services import _check_grant, _manager_role, _valid_role

logger = logging.getLogger(__name__)

INVITATION_SUBJECT = "You are invited to {tenant} on Lexrag"
INVITATION_BODY = """Hello,

{inviter} has invited you to join {tenant} on Lexrag, as {role}.

Nothing changes unless you accept. To accept or decline, open:

{link}

{how}The link works until {expires} (UTC). If you did not expect this e-mail, ignore it.
"""
HOW_NEW = "If you have no Lexrag account yet, you choose a password there.\n\n"
HOW_EXISTING = "You will be asked to sign in first.\n\n"


def invitation_link(token: str) -> str:
    """The absolute link of an invitation token, on the configured site (`SITE_URL`)."""
    return settings.SITE_URL.rstrip("/") + reverse("invitation-open", kwargs={"token": token})


def _send(*, invitation: Invitation, token: str) -> None:
    inviter = invitation.invited_by
    name = (inviter.get_full_name() or inviter.get_username()) if inviter else "An administrator"
    body = INVITATION_BODY.format(
        inviter=name,
        tenant=invitation.tenant.name,
        role=invitation.role,
        link=invitation_link(token),
        how=HOW_EXISTING if invitation.user_id else HOW_NEW,
        expires=invitation.expires_at.strftime("%Y-%m-%d %H:%M"),
    )
    send_mail(INVITATION_SUBJECT.format(tenant=invitation.tenant.name), body, None, [invitation.email])


def _mail(*, invitation: Invitation, token: str, by_address: bool) -> None:
    """Mail the link. For an address the admin typed, a failure is `MailUnavailable` (nothing is
    kept): it is tried for every address, so it says nothing about accounts. For a username's
    account it is logged only: refusing would tell the admin the account exists and has an address."""
    if not invitation.email:
        return
    try:
        _send(invitation=invitation, token=token)
    except (SMTPException, OSError) as exc:
        if by_address:
            raise MailUnavailable(
                f"The invitation e-mail to {invitation.identifier} could not be sent, so nobody was "
                "invited; try again."
            ) from exc
        logger.warning("invitation %s: the e-mail could not be sent (%s)", invitation.pk, exc)


def _addressee(identifier: str):
    """(account, address to mail) for a normalised identifier: the active account it names, if
    exactly one, and the address typed or that account's own address."""
    users = get_user_model().objects.filter(is_active=True)
    if "@" in identifier:
        matches = list(users.filter(Q(email__iexact=identifier) | Q(username__iexact=identifier))[:2])
        return (matches[0] if len(matches) == 1 else None), identifier
    user = users.filter(username=identifier).first()
    return user, (user.email if user else "")


def _normalised(identifier: str) -> str:
    """The identifier as stored and compared: trimmed; an address lower-cased and checked."""
    identifier = (identifier or "").strip()
    if not identifier:
        raise InvalidInput("Give a username or an e-mail address.", details={"identifier": "required"})
    if "@" not in identifier:
        return identifier
    try:
        validate_email(identifier)
    except ValidationError as exc:
        raise InvalidInput(
            f"{identifier!r} is not a valid e-mail address.", details={"identifier": "invalid"}
        ) from exc
    return identifier.lower()


def invitation_create_check(*, tenant: Tenant, identifier: str, role: str, invited_by) -> str:
    """Raise the error `invitation_create` would raise for these arguments, writing nothing;
    returns the normalised identifier. Only the admin's own input is judged (role, their right to
    grant it, the identifier's form) and whether the firm's own members include it; never whether
    an account exists."""
    _valid_role(role)
    _check_grant(tenant=tenant, role=role, actor_role=_manager_role(tenant=tenant, actor=invited_by))
    identifier = _normalised(identifier)
    members = selectors.membership_list(tenant=tenant)
    lookup = Q(user__email__iexact=identifier) | Q(user__username__iexact=identifier)
    current = members.filter(lookup if "@" in identifier else Q(user__username=identifier)).first()
    if current is not None:  # the firm's own member list shows as much
        raise Conflict(
            f"{current.user.get_username()} is already a member of {tenant.name}, as {current.role}.",
            details={"identifier": "already_member", "role": current.role},
        )
    return identifier


def _issue(invitation: Invitation) -> str:
    """Give `invitation` a fresh token and expiry; returns the token (only its hash is kept)."""
    token = secrets.token_urlsafe(32)
    invitation.token_hash = Invitation.hash_token(token)
    invitation.expires_at = timezone.now() + timedelta(days=settings.INVITATION_MAX_AGE_DAYS)
    return token


@transaction.atomic
def invitation_create(*, tenant: Tenant, identifier: str, role: str, invited_by) -> Invitation:
    """Invite `identifier` (a username or an e-mail address) to `tenant` as `role`: a pending
    invitation, mailed when there is an address, which the invitee accepts or declines. A pending
    invitation for the same identifier is replaced. The reply is the same whether or not an
    account exists. Errors: `PermissionDenied` (not an admin here, or granting owner without being
    one), `InvalidInput` (blank or malformed identifier, unknown role), `Conflict` (already a
    member), `MailUnavailable` for an address (nothing is kept)."""
    identifier = invitation_create_check(
        tenant=tenant, identifier=identifier, role=role, invited_by=invited_by
    )
    selectors.invitation_list(tenant=tenant).filter(
        identifier=identifier, status=InvitationStatus.PENDING
    ).update(status=InvitationStatus.CANCELLED, responded_at=timezone.now())
    user, email = _addressee(identifier)
    invitation = Invitation(
        tenant=tenant, identifier=identifier, role=role, user=user, email=email, invited_by=invited_by
    )
    token = _issue(invitation)
    invitation.full_clean()
    invitation.save()
    _mail(invitation=invitation, token=token, by_address="@" in identifier)
    return invitation


@transaction.atomic
def invitation_resend(*, tenant: Tenant, invitation_id, sent_by) -> Invitation:
    """Mail a pending invitation again with a fresh link (the old one stops working) and a fresh
    expiry."""
    _manager_role(tenant=tenant, actor=sent_by)
    invitation = selectors.invitation_get(tenant=tenant, invitation_id=invitation_id)
    if invitation.status != InvitationStatus.PENDING:
        raise InvalidInput(
            f"The invitation for {invitation.identifier} is {invitation.status}: nothing to resend.",
            details={"invitation": invitation.status},
        )
    token = _issue(invitation)
    invitation.save(update_fields=["token_hash", "expires_at"])
    _mail(invitation=invitation, token=token, by_address="@" in invitation.identifier)
    return invitation


@transaction.atomic
def invitation_cancel(*, tenant: Tenant, invitation_id, cancelled_by) -> Invitation:
    """Withdraw a pending invitation: its link and in-app offer stop working."""
    _manager_role(tenant=tenant, actor=cancelled_by)
    invitation = selectors.invitation_get(tenant=tenant, invitation_id=invitation_id)
    if invitation.status == InvitationStatus.PENDING:
        _close(invitation, InvitationStatus.CANCELLED)
    return invitation


def _close(invitation: Invitation, status: str) -> None:
    invitation.status, invitation.responded_at = status, timezone.now()
    invitation.save(update_fields=["status", "responded_at"])


def _open_for(invitation: Invitation | None, user, *, via_link: bool) -> Invitation:
    """`invitation` when `user` may answer it now: open, and addressed to their account (in the
    app), or opened by its link (which proves the mailbox) when it names no account. `NotFound`
    otherwise, the same for someone else's invitation (open or not) and a missing one: in the app,
    only the invitee learns that theirs is no longer valid."""
    if not via_link and (invitation is None or invitation.user_id != user.pk):
        raise NotFound("Invitation not found.")
    if invitation is None or not invitation.is_open or not invitation.tenant.is_active:
        raise NotFound("This invitation is no longer valid: it was answered, withdrawn or has expired.")
    if invitation.user_id == user.pk or (via_link and invitation.user_id is None):
        return invitation
    raise PermissionDenied("This invitation is for another account: sign in with the account it was sent to.")


@transaction.atomic
def invitation_accept(*, invitation_id, user, token: str | None = None) -> Membership:
    """`user` accepts an invitation (in the app by id, or with its link's `token`): they become a
    member with its role. Their active firm does not change (they switch when they choose to)."""
    invitation = _locked(invitation_id=invitation_id, token=token)
    invitation = _open_for(invitation, user, via_link=token is not None)
    membership = Membership.objects.filter(tenant=invitation.tenant, user=user).first()
    if membership is None:
        membership = Membership(tenant=invitation.tenant, user=user, role=invitation.role)
        membership.full_clean()
        membership.save()
    if invitation.user_id is None:
        invitation.user = user
        invitation.save(update_fields=["user"])
    _close(invitation, InvitationStatus.ACCEPTED)
    return membership


@transaction.atomic
def invitation_decline(*, invitation_id, user, token: str | None = None) -> Invitation:
    """`user` declines an invitation (in the app by id, or with its link's `token`)."""
    invitation = _open_for(
        _locked(invitation_id=invitation_id, token=token), user, via_link=token is not None
    )
    _close(invitation, InvitationStatus.DECLINED)
    return invitation


@transaction.atomic
def invitation_accept_new_account(*, token: str, password: str):
    """A newcomer accepts the invitation of its link by choosing a password: an account named by
    the invited address, then the membership. Returns the new user. `InvalidInput` when an account
    already uses that name (they sign in and accept instead)."""
    invitation = _locked(invitation_id=None, token=token)
    if invitation is None or not invitation.is_open or invitation.user_id is not None:
        raise NotFound("This invitation is no longer valid: it was answered, withdrawn or has expired.")
    users = get_user_model().objects
    if "@" not in invitation.identifier or users.filter(username__iexact=invitation.identifier).exists():
        raise InvalidInput(
            "An account already uses this name: sign in and accept the invitation.",
            details={"identifier": "sign_in"},
        )
    user = users.create_user(username=invitation.identifier, email=invitation.identifier, password=password)
    invitation_accept(invitation_id=invitation.pk, user=user, token=token)
    return user


def _locked(*, invitation_id, token: str | None) -> Invitation | None:
    """The invitation by its link's token (when given) or id, locked for the answer."""
    rows = Invitation.objects.select_for_update(of=("self",)).select_related("tenant")
    if token is not None:
        return rows.filter(token_hash=Invitation.hash_token(token)).first()
    try:
        return rows.filter(pk=int(invitation_id)).first()
    except (TypeError, ValueError):
        return None
