"""Django admin for tenants, memberships and API keys. A new key is shown once, in a message."""

from django import forms
from django.contrib import admin, messages
from django.utils import timezone

from ragsite.exceptions import ApplicationError

from . import services
from .models import ApiKey, Invitation, Membership, Tenant


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "is_active", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "tenant", "role", "created_at"]
    list_filter = ["role", "tenant"]
    search_fields = ["user__username", "tenant__name"]
    autocomplete_fields = ["user", "tenant"]


PROVENANCE = ["created_by", "created_by_key", "created_via"]


class ApiKeyAddForm(forms.ModelForm):
    """The add form: refuses, as a form error, a key its maker may not create (a staff user who is
    not a superuser makes keys only for a firm they belong to, at most with their role there), so
    nothing is created and the operator sees why (`services.api_key_create_check`)."""

    maker = None  # the request's user, set by ApiKeyAdmin.get_form

    class Meta:
        model = ApiKey
        fields = ["tenant", "name", "role"]

    def clean(self):
        cleaned = super().clean()
        tenant, role = cleaned.get("tenant"), cleaned.get("role")
        if tenant is None or not role:
            return cleaned  # the field errors say why
        try:
            services.api_key_create_check(tenant=tenant, role=role, created_by=self.maker)
        except ApplicationError as exc:
            field = next((name for name in exc.details if name in self.fields), None)
            self.add_error(field, exc.message)
        return cleaned


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "tenant", "masked", "role", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["tenant", "role"]
    search_fields = ["name", "prefix"]
    actions = ["revoke"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None:
            return super().get_form(request, obj, change=change, **kwargs)
        form = super().get_form(request, obj, change=change, form=ApiKeyAddForm, **kwargs)
        return type(form.__name__, (form,), {"maker": request.user})

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["tenant", "name", "role"]
        return ["tenant", "name", "role", "masked", *PROVENANCE, "created_at", "last_used_at", "revoked_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        # A key's role is fixed when it is made (and capped at its maker's then): another role is
        # another key, so an edit here never raises a key past its maker.
        return ["tenant", "role", "masked", *PROVENANCE, "created_at", "last_used_at", "revoked_at"]

    @admin.display(description="Key")
    def masked(self, obj):
        return f"lx_{obj.prefix}_…"

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        api_key, raw_key = services.api_key_create(
            tenant=obj.tenant,
            name=obj.name,
            role=obj.role,
            created_by=request.user,
            created_via="operator admin",
        )
        obj.pk = api_key.pk
        obj.prefix = api_key.prefix
        messages.warning(request, f"Copy this key now; it will not be shown again: {raw_key}")

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} key(s).")


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Every firm's invitations, read-only: the operator sees who was invited where, and the answer."""

    list_display = ["identifier", "tenant", "role", "status", "invited_by", "created_at", "expires_at"]
    list_filter = ["status", "tenant"]
    search_fields = ["identifier", "tenant__name"]
    exclude = ["token_hash"]

    def has_add_permission(self, request):
        return False  # a firm's admin invites, through tenants.invitations

    def has_change_permission(self, request, obj=None):
        return False
