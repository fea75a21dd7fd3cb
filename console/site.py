"""The tenant admin site at /manage/: a firm's admins and owners manage their own firm there.

A second `AdminSite` rather than tenant-scoped admins on /admin/: the operator site stays exactly as
it is for superusers (every tenant), and nothing registered here can see past the active tenant
because every model admin here derives from `TenantScopedAdmin` (console.scoped).

Who may enter: an active user whose role in the session's active tenant (the staff UI's tenant
switcher chooses it, `tenants.services.session_credential`) is admin or owner. `is_staff` plays no
part: a firm's admin is not platform staff.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.contrib.admin import AdminSite
from django.contrib.auth.forms import AuthenticationForm
from django.urls import NoReverseMatch, reverse

from ragsite.exceptions import NoActiveTenant, TenantChoiceRequired
from tenants import selectors as tenant_selectors
from tenants import services as tenant_services
from tenants.login_throttle import ThrottledLoginMixin
from tenants.models import Role

from .pages import SitePagesMixin

MINIMUM_ROLE = Role.ADMIN
# Every refusal says what the console is first: a member who follows a link here learns why it is
# not for them, not only that it is not.
CONSOLE_PURPOSE = (
    "The firm admin console is where a firm's admins and owners manage its prompt templates, ranking "
    "weights, members and API keys and read its audit log."
)
REFUSED_MESSAGE = (
    CONSOLE_PURPOSE + " It is for your firm's admins and owners. Your role in {tenant} is {role}: "
    "ask an admin of your firm, or switch to a firm where you are an admin."
)
NO_TENANT_MESSAGE = (
    CONSOLE_PURPOSE + " You are not a member of any firm, so there is no firm admin console for you."
)
CHOOSE_TENANT_MESSAGE = (
    CONSOLE_PURPOSE + " You belong to several firms: choose the firm to work in on your firms page "
    "(/accounts/firms/) first, then open the firm admin console."
)


def console_credential(request) -> tenant_services.TenantCredential | None:
    """The active tenant and role of the request's user, or None without a tenant (memoised on
    the request: the admin asks several times per page)."""
    if not hasattr(request, "_console_credential"):
        try:
            credential = tenant_services.session_credential(user=request.user, session=request.session)
        except NoActiveTenant as exc:
            credential = None
            request._console_choice_required = isinstance(exc, TenantChoiceRequired)
        request._console_credential = credential
    return request._console_credential


def refusal_reason(credential, *, choice_required: bool = False) -> str | None:
    """Why this credential may not use the console, or None when it may (`choice_required`: the
    user belongs to several firms and has chosen none)."""
    if credential is None:
        return CHOOSE_TENANT_MESSAGE if choice_required else NO_TENANT_MESSAGE
    if not credential.has_role(MINIMUM_ROLE):
        return REFUSED_MESSAGE.format(tenant=credential.tenant.name, role=credential.role)
    return None


def console_refusal(request) -> str | None:
    """Why the request's user may not use the console, or None when they may."""
    credential = console_credential(request)
    return refusal_reason(credential, choice_required=getattr(request, "_console_choice_required", False))


class ConsoleLoginForm(ThrottledLoginMixin, AuthenticationForm):
    """The usual username and password (throttled like every login form); refuses, with the
    reason, a user who is not an admin of the tenant they would act for."""

    def confirm_login_allowed(self, user):
        super().confirm_login_allowed(user)
        request, previous_user = self.request, self.request.user
        request.user = user  # session_credential reads the user's memberships
        try:
            reason = console_refusal(request)
        finally:
            request.user = previous_user
            del request._console_credential  # asked again once logged in
            request.__dict__.pop("_console_choice_required", None)
        if reason:
            raise forms.ValidationError(reason, code="not_firm_admin")


def page_after_switch(target: str, url_kwargs: dict, credential) -> str:
    """Where a firm switch made on the console page `target` (path and query) lands: the same
    page, unless the new firm gives no console (its read-only Settings page then) or the page shows
    one object of the previous firm (that model's list then: the object would be "not found")."""
    if refusal_reason(credential):
        return reverse("web:settings")
    if "object_id" not in url_kwargs:
        return target
    app_label, model_name = urlsplit(target).path.removeprefix(reverse("manage:index")).split("/")[:2]
    try:
        return reverse(f"manage:{app_label}_{model_name}_changelist")
    except NoReverseMatch:
        return reverse("manage:index")


class TenantAdminSite(SitePagesMixin, AdminSite):
    site_header = "Lexrag firm admin"
    site_title = "Lexrag firm admin"
    index_title = "Your firm"
    site_url = None  # the header links "Back to Lexrag" (templates/admin/base_site.html)
    # The index and breadcrumbs lead everywhere; at 1366 px the sidebar would squeeze the lists.
    enable_nav_sidebar = False
    login_form = ConsoleLoginForm
    login_template = "console/login.html"

    def has_permission(self, request) -> bool:
        user = request.user
        if not (user.is_active and user.is_authenticated):
            return False
        return console_refusal(request) is None

    def each_context(self, request):
        context = super().each_context(request)
        credential = console_credential(request) if request.user.is_authenticated else None
        context["console_tenant"] = credential.tenant if credential else None
        context["console_role"] = credential.role if credential else None
        context["console_refusal"] = console_refusal(request) if request.user.is_authenticated else None
        # The header's firm switcher (templates/admin/base_site.html): every firm of the user.
        context["console_memberships"] = (
            list(tenant_selectors.membership_list_for_user(user=request.user)) if credential else []
        )
        # Prompts change nothing while the offline provider answers: the template pages say so.
        context["offline_provider"] = settings.RAG_LLM_PROVIDER.strip().lower() == "extractive"
        return context

    # The index in a firm's words: what the operator site calls "Tenants" is the firm here.
    APP_NAMES = {"tenants": "Your firm", "templates_admin": "Prompt templates", "rag": "Legal research"}
    MODEL_NAMES = {"Membership": "Members"}

    def get_app_list(self, request, app_label=None):
        apps = super().get_app_list(request, app_label)
        for app in apps:
            app["name"] = self.APP_NAMES.get(app["app_label"], app["name"])
            for model in app["models"]:
                model["name"] = self.MODEL_NAMES.get(model["object_name"], model["name"])
        return apps

    @staticmethod
    def active_tenant(request):
        """The tenant every view of this site acts for (the user's active tenant)."""
        return console_credential(request).tenant


site = TenantAdminSite(name="manage")
