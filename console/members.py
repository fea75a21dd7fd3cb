"""The firm's members and invitations on the tenant site: members (change a role, remove) and
invitations (invite by username or e-mail, resend, cancel). An invitation is pending until the
invitee accepts it (tenants.invitations): nobody becomes a member without their consent, and the
firm sees only the identifier its admin typed until then, never the account behind it.

The rules (owner-only grants, no self lock-out, never without an owner) live in `tenants.services`;
the forms ask its `*_check` functions so a refusal shows on the form, and every write is a service
call. A write the service still refuses after validation (a concurrent change, the mail server
down) is shown as an error message and nothing is kept.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected as django_delete_selected
from django.contrib.admin.utils import unquote
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import formats, timezone

from ragsite.exceptions import ApplicationError
from tenants import invitations
from tenants import services as tenant_services
from tenants.models import Invitation, InvitationStatus, Membership, Role
from tenants.selectors import invitation_list, membership_list, membership_role_of

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


class InviteForm(forms.ModelForm):
    """Whom to invite and as what; `tenant` and `actor` as for `RoleForm`."""

    tenant = None
    actor = None
    identifier = forms.CharField(
        label="Username or e-mail",
        max_length=254,
        help_text="Whom to invite. The invitation stays pending until they accept it; an e-mail "
        "address gets a link, with which someone new chooses a password.",
    )

    class Meta:
        model = Invitation
        fields = ["identifier", "role"]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("identifier") and cleaned.get("role"):
            cleaned["identifier"] = _as_form_error(
                invitations.invitation_create_check,
                tenant=self.tenant,
                identifier=cleaned["identifier"],
                role=cleaned["role"],
                invited_by=self.actor,
            )
        return cleaned


class RoleForm(forms.ModelForm):
    """A member's role; `tenant` and `actor` are set by the admin on a subclass per request."""

    tenant = None
    actor = None

    class Meta:
        model = Membership
        fields = ["role"]

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


class WriteRefusedMixin:
    """A service's refusal after the form validated (a concurrent change, the mail server down)
    becomes an error message, and the add form comes back with what was typed."""

    kept_fields: tuple[str, ...] = ()

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except WriteRefused as refused:
            self.message_user(request, refused.error.message, messages.ERROR)
            kept = {name: request.POST.get(name, "") for name in self.kept_fields}
            return HttpResponseRedirect(
                f"{request.path}?{urlencode(kept)}" if object_id is None else request.path
            )


class _FirmRoles:
    """Only an owner is offered the owner role (the service refuses it to anyone else anyway)."""

    def _is_owner(self, request) -> bool:
        return membership_role_of(tenant=self.active_tenant(request), user=request.user) == Role.OWNER

    def formfield_for_choice_field(self, db_field, request, **kwargs):
        if db_field.name == "role" and not self._is_owner(request):
            kwargs["choices"] = [(role, label) for role, label in Role.choices if role != Role.OWNER]
        return super().formfield_for_choice_field(db_field, request, **kwargs)


@admin.register(Membership, site=site)
class ConsoleMembershipAdmin(_FirmRoles, WriteRefusedMixin, TenantScopedAdmin):
    """The firm's members (each accepted an invitation): "change" changes the role only, "delete"
    removes the member from the firm (their account stays, their keys here are revoked). New
    members come from invitations (the "Invite a member" button leads there)."""

    change_list_template = "console/membership/change_list.html"
    list_display = ["username", "full_name", "email", "role", "joined", "last_login", "status"]
    list_display_links = ["username"]
    list_filter = ["role"]
    search_fields = ["user__username", "user__email", "user__first_name", "user__last_name"]
    search_help_text = "Words of a member's username, e-mail or name."
    ordering = ["user__username"]
    actions = ["delete_selected"]
    readonly_fields = ["username", "full_name", "email", "joined", "last_login", "status"]
    kept_fields = ("role",)

    def tenant_queryset(self, request):
        return membership_list(tenant=self.active_tenant(request))

    def changelist_view(self, request, extra_context=None):
        invite_url = reverse("manage:tenants_invitation_add")
        return super().changelist_view(request, {"invite_url": invite_url, **(extra_context or {})})

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
        # A member added before invitations needed consent may still have no password.
        return "active" if obj.user.has_usable_password() else "no password yet"

    # --- Forms ---------------------------------------------------------------------------------

    def get_fields(self, request, obj=None):
        return ["role", *self.readonly_fields]

    def get_form(self, request, obj=None, change=False, **kwargs):
        kwargs["form"] = RoleForm
        form_class = super().get_form(request, obj, change, **kwargs)
        context = {"tenant": self.active_tenant(request), "actor": request.user}
        return type(form_class.__name__, (form_class,), context)

    # --- Permissions: the service's rules decide which rows this user may touch ----------------

    def has_add_permission(self, request):
        return False  # members join by accepting an invitation

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
        try:
            tenant_services.membership_role_change(
                tenant=self.active_tenant(request),
                membership_id=obj.pk,
                role=obj.role,
                changed_by=request.user,
            )
        except ApplicationError as exc:
            raise WriteRefused(exc) from exc

    def delete_model(self, request, obj):
        try:
            tenant_services.membership_remove(
                tenant=self.active_tenant(request), membership_id=obj.pk, removed_by=request.user
            )
        except ApplicationError as exc:
            raise WriteRefused(exc) from exc

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "GET" and object_id:
            self._explain_read_only(request, object_id)
        return super().changeform_view(request, object_id, form_url, extra_context)

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


@admin.register(Invitation, site=site)
class ConsoleInvitationAdmin(_FirmRoles, WriteRefusedMixin, TenantScopedAdmin):
    """The firm's invitations: "add" invites a username or e-mail address, the actions resend or
    cancel pending ones. Only what the admin typed is shown, never the account it may name: the
    reply to an invitation is the same whether or not an account exists."""

    list_display = ["invited", "role", "state", "invited_by_name", "created_at", "expires_at"]
    list_display_links = ["invited"]
    list_filter = ["status", "role"]
    search_fields = ["identifier"]
    search_help_text = "Words of the username or e-mail address invited."
    actions = ["resend", "cancel"]
    fields = ["identifier", "role", "state", "invited_by_name", "created_at", "expires_at", "responded_at"]
    readonly_fields = fields
    kept_fields = ("identifier", "role")

    def tenant_queryset(self, request):
        return invitation_list(tenant=self.active_tenant(request))

    @admin.display(description="Invited (as typed)", ordering="identifier")
    def invited(self, obj):
        return obj.identifier

    @admin.display(description="Status", ordering="status")
    def state(self, obj):
        if obj.status == InvitationStatus.PENDING:
            return "pending" if obj.is_open else "expired"
        return obj.get_status_display().lower()

    @admin.display(description="Invited by")
    def invited_by_name(self, obj):
        return obj.invited_by.get_username() if obj.invited_by else "-"

    def get_fields(self, request, obj=None):
        return ["identifier", "role"] if obj is None else self.fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = InviteForm
        form_class = super().get_form(request, obj, change, **kwargs)
        context = {"tenant": self.active_tenant(request), "actor": request.user}
        return type(form_class.__name__, (form_class,), context)

    def has_change_permission(self, request, obj=None):
        return False  # an invitation is answered, resent or cancelled, never edited

    def has_delete_permission(self, request, obj=None):
        return False  # cancel instead: the history of who was invited stays

    def add_view(self, request, form_url="", extra_context=None):
        return super().add_view(request, form_url, {"title": "Invite a member", **(extra_context or {})})

    def save_model(self, request, obj, form, change):
        try:
            invitation = invitations.invitation_create(
                tenant=self.active_tenant(request),
                identifier=form.cleaned_data["identifier"],
                role=obj.role,
                invited_by=request.user,
            )
        except ApplicationError as exc:
            raise WriteRefused(exc) from exc
        for field in ("pk", "tenant", "identifier", "status", "created_at", "expires_at"):
            setattr(obj, field, getattr(invitation, field))
        self.message_user(request, _invited_message(invitation))
        _say_where_mail_went(self, request)

    def response_add(self, request, obj, post_url_continue=None):
        # Django's "was added successfully" would name the object; the message above says it all.
        return HttpResponseRedirect(reverse("manage:tenants_invitation_changelist"))

    @admin.action(description="Resend the invitation (a fresh link)", permissions=["view"])
    def resend(self, request, queryset):
        tenant, sent = self.active_tenant(request), []
        for invitation in queryset.filter(status=InvitationStatus.PENDING):
            try:
                invitations.invitation_resend(
                    tenant=tenant, invitation_id=invitation.pk, sent_by=request.user
                )
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                sent.append(invitation.identifier)
        if sent:
            self.message_user(request, f"Invitations renewed for: {', '.join(sent)}.")
            _say_where_mail_went(self, request)
        else:
            self.message_user(request, "None of the selected invitations is pending.", messages.WARNING)

    @admin.action(description="Cancel the selected invitations", permissions=["view"])
    def cancel(self, request, queryset):
        tenant = self.active_tenant(request)
        for invitation_id in queryset.filter(status=InvitationStatus.PENDING).values_list("pk", flat=True):
            invitations.invitation_cancel(
                tenant=tenant, invitation_id=invitation_id, cancelled_by=request.user
            )
        self.message_user(
            request, "The selected pending invitations are cancelled; their links no longer work."
        )


def _invited_message(invitation: Invitation) -> str:
    """The reply to an invitation: the same for every identifier of a kind, whether or not an
    account exists (an address is always mailed)."""
    if "@" in invitation.identifier and undelivered_mail() is None:
        return (
            f"An invitation e-mail was sent to {invitation.identifier}. It is pending until accepted "
            "with its link."
        )
    if "@" in invitation.identifier:  # _say_where_mail_went says where the e-mail went
        return f"The invitation for {invitation.identifier} is pending until accepted with its link."
    return f"The invitation for {invitation.identifier} is pending until they accept it."


# E-mail backends that deliver nothing, and where the message goes instead.
UNDELIVERED = {
    "django.core.mail.backends.console.EmailBackend": "printed on the server's output (its console log)",
    "django.core.mail.backends.locmem.EmailBackend": "kept in the server's memory (the test outbox)",
    "django.core.mail.backends.filebased.EmailBackend": "written to a file on the server",
    "django.core.mail.backends.dummy.EmailBackend": "discarded",
}


def undelivered_mail() -> str | None:
    """Where e-mail goes when this server delivers none (EMAIL_URL unset: consolemail://), or None
    when it is handed to a mail server."""
    return UNDELIVERED.get(settings.EMAIL_BACKEND)


def _say_where_mail_went(model_admin, request) -> None:
    # "An e-mail was sent" was untrue on a server printing mail to its log: say where it went.
    where = undelivered_mail()
    if where:
        model_admin.message_user(
            request,
            f"This server delivers no e-mail: invitation e-mails are {where}, not sent to anyone "
            "(the link is in them). To mail invitations, set EMAIL_URL to your mail server, e.g. "
            "smtp+tls://user:password@mail.example.com:587 (docs/configuration.md).",
            messages.WARNING,
        )
