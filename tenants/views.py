"""Account pages outside the REST API: the user's firms (the firm chooser, leaving a firm, pending
invitations to accept or decline) and an invitation's e-mailed link (see tenants.invitations)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.views import PasswordResetConfirmView
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ragsite.exceptions import ApplicationError

from . import invitations, selectors, services
from .services import SESSION_TENANT_KEY


class InvitationAcceptView(PasswordResetConfirmView):
    """A link mailed before invitations needed consent (the member was added at once): the
    invitee sets their first password. A used or expired link says so."""

    template_name = "tenants/invitation_set_password.html"
    post_reset_login = True
    success_url = reverse_lazy("web:cases")
    title = "Accept your invitation"


def _safe_next(request) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if "\x00" in target or not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return ""
    return target


@login_required
@require_GET
def firms(request):
    """The user's firms and pending invitations. It is also the firm chooser: a user of several
    firms who has not chosen one is sent here (with `?next=`) instead of being put in one."""
    memberships = selectors.membership_list_for_user(user=request.user)
    context = {
        "memberships": memberships,
        "active_tenant_id": request.session.get(SESSION_TENANT_KEY),
        "invitations": selectors.invitation_list_for_user(user=request.user),
        "next": _safe_next(request),
        "choosing": bool(request.GET.get("choose")),
    }
    return render(request, "tenants/firms.html", context)


@login_required
@require_POST
def firm_leave(request, slug: str):
    """The user leaves one of their firms (not as its last owner); their keys there are revoked."""
    membership = selectors.membership_list_for_user(user=request.user).filter(tenant__slug=slug).first()
    if membership is None:
        return render(request, "web/not_found.html", status=404)
    try:
        services.membership_leave(tenant=membership.tenant, user=request.user)
    except ApplicationError as exc:
        messages.error(request, f"You are still a member of {membership.tenant.name}: {exc.message}")
    else:
        if request.session.get(SESSION_TENANT_KEY) == membership.tenant_id:
            del request.session[SESSION_TENANT_KEY]
        messages.success(request, f"You have left {membership.tenant.name}.")
    return redirect("firms")


@login_required
@require_POST
def invitation_answer(request, invitation_id: int, answer: str):
    """Accept or decline, in the app, an invitation addressed to the user's account."""
    if answer not in ("accept", "decline"):
        return render(request, "web/not_found.html", status=404)
    try:
        _answer(request, answer, invitation_id=invitation_id)
    except ApplicationError:
        return render(request, "web/not_found.html", status=404)
    return redirect("firms")


def _answer(request, answer: str, *, invitation_id=None, token=None) -> None:
    if answer == "accept":
        membership = invitations.invitation_accept(
            invitation_id=invitation_id, user=request.user, token=token
        )
        messages.success(
            request,
            f"You have joined {membership.tenant.name} as {membership.role}. "
            "Choose it below when you want to work in it.",
        )
    else:
        declined = invitations.invitation_decline(invitation_id=invitation_id, user=request.user, token=token)
        messages.info(request, f"You declined the invitation to {declined.tenant.name}.")


@require_http_methods(["GET", "POST"])
def invitation_open(request, token: str):
    """An invitation's e-mailed link: a signed-in user accepts or declines it; a newcomer (no
    account uses the invited address) chooses a password and accepts; anyone else is asked to
    sign in first. Nothing happens on GET."""
    invitation = selectors.invitation_get_by_token(token=token)
    if invitation is None or not invitation.is_open or not invitation.tenant.is_active:
        return render(request, "tenants/invitation.html", {"invalid": True}, status=404)
    context = {"invitation": invitation, "login_url": f"{reverse('login')}?next={request.path}"}
    if request.user.is_authenticated:
        if request.method == "POST":
            try:
                _answer(request, request.POST.get("answer", ""), token=token)
            except ApplicationError as exc:
                context["error"] = exc.message
                return render(request, "tenants/invitation.html", context, status=exc.status_code)
            return redirect("firms")
        context["other_account"] = invitation.user_id not in (None, request.user.pk)
        return render(request, "tenants/invitation.html", context)
    if invitation.user_id is not None or _name_taken(invitation.identifier):
        return render(request, "tenants/invitation.html", {**context, "sign_in": True})
    newcomer = get_user_model()(username=invitation.identifier, email=invitation.identifier)
    form = SetPasswordForm(newcomer, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            user = invitations.invitation_accept_new_account(
                token=token, password=form.cleaned_data["new_password1"]
            )
        except ApplicationError as exc:
            context["error"] = exc.message
            return render(request, "tenants/invitation.html", {**context, "sign_in": True}, status=400)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("web:cases")
    return render(request, "tenants/invitation.html", {**context, "form": form, "newcomer": newcomer})


def _name_taken(identifier: str) -> bool:
    return "@" not in identifier or get_user_model().objects.filter(username__iexact=identifier).exists()
