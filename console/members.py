"""The firm's members on the tenant site: invite (by username or e-mail), change a role, remove,
resend a pending invitation.

The rules (owner-only grants, no self lock-out, never without an owner) live in `tenants.services`;
the forms ask its `*_check` functions so a refusal shows on the form, and every write is a service
call. A write the service still refuses after validation (a concurrent change, the mail server
down) is shown as an error message and nothing is kept.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected as django_delete_selected
from django.contrib.admin.utils import unquote
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import formats, timezone

from ragsite.exceptions import ApplicationError
from tenants import services as tenant_services
from tenants.models import Membership, Role
from tenants.selectors import membership_list, membership_role_of

from .scoped import TenantScopedAdmin
from .site import site


def _when(moment) -> str:
    """A date and time as the admin's lists show them (read-only fields would print the raw value)."""
    return formats.localize(timezone.localtime(moment)) if moment else "-"


class WriteRefused(Exception):
    """A service refused a write after the form validated; rolls back the admin's transaction."""

    def __init__(self, error: ApplicationError):
        super().__init__(error.message)
        self.error = error


def _as_form_error(check, **kwargs):
    try:
        return check(**kwargs)
    except ApplicationError as exc:
        raise forms.ValidationError(exc.message, code=exc.error_type) from exc


class MemberForm(forms.ModelForm):
    """Base of both forms: `tenant` and `actor` are set by the admin on a subclass per request."""

    tenant = None
    actor = None

    class Meta:
        model = Membership
        fields = ["role"]


class InviteForm(MemberForm):
    identifier = forms.CharField(
        label="Username or e-mail",
        max_length=254,
        help_text="An existing account's username or e-mail address. An address nobody uses yet gets "
        "an account and an invitation e-mail with a link to set a password.",
    )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("identifier") and cleaned.get("role"):
            _as_form_error(
                tenant_services.membership_invite_check,
                tenant=self.tenant,
                identifier=cleaned["identifier"],
                role=cleaned["role"],
                invited_by=self.actor,
            )
        return cleaned


class RoleForm(MemberForm):
    def clean_role(self):
        role = self.cleaned_data["role"]
        _as_form_error(
            tenant_services.membership_role_change_check,
            tenant=self.tenant,
            membership=self.instance,
            role=role,
            changed_by=self.actor,
        )
        return role


@admin.register(Membership, site=site)
class ConsoleMembershipAdmin(TenantScopedAdmin):
    """The firm's members: "add" is an invitation, "change" changes the role only, "delete" removes
    the member from the firm (their account stays)."""

    list_display = ["username", "full_name", "email", "role", "joined", "last_login", "status"]
    list_display_links = ["username"]
    list_filter = ["role"]
    search_fields = ["user__username", "user__email", "user__first_name", "user__last_name"]
    search_help_text = "Words of a member's username, e-mail or name."
    ordering = ["user__username"]
    actions = ["delete_selected", "resend_invitation"]
    readonly_fields = ["username", "full_name", "email", "joined", "last_login", "status"]

    def tenant_queryset(self, request):
        return membership_list(tenant=self.active_tenant(request))

    # --- Columns -------------------------------------------------------------------------------

    @admin.display(description="Username", ordering="user__username")
    def username(self, obj):
        return obj.user.get_username()

    @admin.display(description="Name", ordering="user__last_name")
    def full_name(self, obj):
        return obj.user.get_full_name() or "-"

    @admin.display(description="E-mail", ordering="user__email")
    def email(self, obj):
        return obj.user.email or "-"

    @admin.display(description="Joined", ordering="created_at")
    def joined(self, obj):
        return _when(obj.created_at)

    @admin.display(description="Last login", ordering="user__last_login")
    def last_login(self, obj):
        return _when(obj.user.last_login)

    @admin.display(description="Status")
    def status(self, obj):
        return "active" if obj.user.has_usable_password() else "invited (no password yet)"

    # --- Forms ---------------------------------------------------------------------------------

    def _is_owner(self, request) -> bool:
        return membership_role_of(tenant=self.active_tenant(request), user=request.user) == Role.OWNER

    def get_fields(self, request, obj=None):
        return ["identifier", "role"] if obj is None else ["role", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def get_form(self, request, obj=None, change=False, **kwargs):
        kwargs["form"] = RoleForm if obj else InviteForm
        form_class = super().get_form(request, obj, change, **kwargs)
        context = {"tenant": self.active_tenant(request), "actor": request.user}
        return type(form_class.__name__, (form_class,), context)

    def formfield_for_choice_field(self, db_field, request, **kwargs):
        if db_field.name == "role" and not self._is_owner(request):
            kwargs["choices"] = [(role, label) for role, label in Role.choices if role != Role.OWNER]
        return super().formfield_for_choice_field(db_field, request, **kwargs)

    # --- Permissions: the service's rules decide which rows this user may touch ----------------

    def _refusal(self, request, obj) -> str | None:
        return tenant_services.membership_manage_refusal(
            tenant=self.active_tenant(request), membership=obj, actor=request.user
        )

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and (
            obj is None or not self._refusal(request, obj)
        )

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and (
            obj is None or not self._refusal(request, obj)
        )

    # --- Writes, through the services ----------------------------------------------------------

    def save_model(self, request, obj, form, change):
        tenant = self.active_tenant(request)
        try:
            if change:
                tenant_services.membership_role_change(
                    tenant=tenant, membership_id=obj.pk, role=obj.role, changed_by=request.user
                )
                return
            membership, mailed = tenant_services.membership_invite(
                tenant=tenant,
                identifier=form.cleaned_data["identifier"],
                role=obj.role,
                invited_by=request.user,
                base_url=request.build_absolute_uri("/"),
            )
        except ApplicationError as exc:
            raise WriteRefused(exc) from exc
        obj.pk, obj.tenant, obj.user, obj.created_at = (
            membership.pk,
            membership.tenant,
            membership.user,
            membership.created_at,
        )
        if mailed:
            self.message_user(request, f"An invitation e-mail was sent to {membership.user.email}.")

    def delete_model(self, request, obj):
        try:
            tenant_services.membership_remove(
                tenant=self.active_tenant(request), membership_id=obj.pk, removed_by=request.user
            )
        except ApplicationError as exc:
            raise WriteRefused(exc) from exc

    def add_view(self, request, form_url="", extra_context=None):
        return super().add_view(request, form_url, {"title": "Invite a member", **(extra_context or {})})

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "GET" and object_id:
            self._explain_read_only(request, object_id)
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except WriteRefused as refused:
            self.message_user(request, refused.error.message, messages.ERROR)
            kept = {name: request.POST.get(name, "") for name in ("identifier", "role")}
            return HttpResponseRedirect(
                f"{request.path}?{urlencode(kept)}" if object_id is None else request.path
            )

    def _explain_read_only(self, request, object_id) -> None:
        obj = self.get_object(request, unquote(object_id))
        refusal = self._refusal(request, obj)
        if refusal:
            self.message_user(request, refusal, messages.INFO)

    def delete_view(self, request, object_id, extra_context=None):
        """A removal the rules refuse (the last owner, an owner for an admin, oneself) is an error
        message on the member's page, not a confirmation page or a bare 403."""
        obj = self.get_object(request, unquote(object_id))  # another firm's: 404
        change_url = reverse("manage:tenants_membership_change", args=[obj.pk])
        try:
            tenant_services.membership_remove_check(
                tenant=self.active_tenant(request), membership=obj, removed_by=request.user
            )
            return super().delete_view(request, object_id, extra_context)
        except (ApplicationError, WriteRefused) as exc:
            message = exc.error.message if isinstance(exc, WriteRefused) else exc.message
            self.message_user(request, f"Not removed: {message}", messages.ERROR)
            return HttpResponseRedirect(change_url)

    # --- Actions -------------------------------------------------------------------------------

    @admin.action(description="Remove selected members from the firm", permissions=["delete"])
    def delete_selected(self, request, queryset):
        """Django's confirmation page, then one service call per member: the ones the rules keep
        are named with the reason, the others removed."""
        if not request.POST.get("post"):
            return django_delete_selected(self, request, queryset)
        tenant, removed = self.active_tenant(request), []
        for membership in queryset.select_related("user"):
            name = membership.user.get_username()
            try:
                tenant_services.membership_remove(
                    tenant=tenant, membership_id=membership.pk, removed_by=request.user
                )
            except ApplicationError as exc:
                self.message_user(request, f"{name} was not removed: {exc.message}", messages.ERROR)
            else:
                removed.append(name)
        if removed:
            self.message_user(request, f"Removed from the firm: {', '.join(removed)}.")
        return None

    @admin.action(
        description="Resend the invitation e-mail (members with no password yet)", permissions=["view"]
    )
    def resend_invitation(self, request, queryset):
        tenant, sent = self.active_tenant(request), []
        for membership in queryset.select_related("user"):
            if membership.user.has_usable_password():
                continue
            try:
                tenant_services.membership_invitation_resend(
                    tenant=tenant,
                    membership_id=membership.pk,
                    sent_by=request.user,
                    base_url=request.build_absolute_uri("/"),
                )
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                sent.append(membership.user.email)
        if sent:
            self.message_user(request, f"Invitation e-mails sent to: {', '.join(sent)}.")
        else:
            self.message_user(
                request, "None of the selected members is waiting for an invitation.", messages.WARNING
            )
