"""Pages of the tenants app outside the REST API: accepting an invitation (see tenants.invitations)."""

from __future__ import annotations

from django.contrib.auth.views import PasswordResetConfirmView
from django.urls import reverse_lazy


class InvitationAcceptView(PasswordResetConfirmView):
    """Django's password-reset confirmation, worded as an invitation: the invitee sets their first
    password, is logged in and lands on the staff UI. A used or expired link says so."""

    template_name = "tenants/invitation_set_password.html"
    post_reset_login = True
    success_url = reverse_lazy("web:cases")
    title = "Accept your invitation"
