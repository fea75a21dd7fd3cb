"""The invitation e-mail of a member who has no account yet: a link to set their first password.

The link carries Django's password-reset token, so it works once (setting the password changes the
hash the token is made from) and expires after PASSWORD_RESET_TIMEOUT; the page behind it is
`tenants.views.InvitationAcceptView`, next to the staff UI's login.
"""

from __future__ import annotations

from smtplib import SMTPException
from urllib.parse import urljoin

from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from ragsite.exceptions import MailUnavailable

INVITATION_SUBJECT = "You are invited to {tenant} on Lexrag"
INVITATION_BODY = """Hello,

{inviter} has invited you to {tenant} on Lexrag, as {role}.

Choose your password here to accept (the link works once):

{link}

Your username is {username}. If you did not expect this e-mail, you can ignore it.
"""


def invitation_path(user) -> str:
    """The set-password page of `user`, with a fresh one-time token."""
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return reverse("invitation-accept", kwargs={"uidb64": uidb64, "token": token})


def invitation_send(*, user, tenant, role: str, invited_by, base_url: str) -> None:
    """Mail `user` a link (absolute, from `base_url`) to set their password and join `tenant`."""
    inviter = (invited_by.get_full_name() or invited_by.get_username()) if invited_by else "An administrator"
    body = INVITATION_BODY.format(
        inviter=inviter,
        tenant=tenant.name,
        role=role,
        link=urljoin(base_url, invitation_path(user)),
        username=user.get_username(),
    )
    try:
        send_mail(INVITATION_SUBJECT.format(tenant=tenant.name), body, None, [user.email])
    except (SMTPException, OSError) as exc:
        raise MailUnavailable(
            f"The invitation e-mail to {user.email} could not be sent, so nobody was invited; try again."
        ) from exc
