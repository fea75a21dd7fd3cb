"""`TenantScopedAdmin`: the base of every model admin on the tenant site, scoped by construction.

Every path into the rows starts from `tenant_queryset` (the tenant selectors): the change list, the
change/history/delete views (Django's `get_object` goes through `get_queryset`), actions (they get
the change list's queryset), exports and autocomplete. Another tenant's id is a 404, as a missing
one is. Foreign-key choices are limited to the tenant's rows (or its members, for users), and the
`tenant` field is never in a form: new rows get the active tenant.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth import get_user_model
from django.http import Http404

from tenants.models import Tenant, TenantOwned
from tenants.selectors import owned_list

from .site import TenantAdminSite


class TenantScopedAdmin(admin.ModelAdmin):
    """Model admin of one tenant's rows. Subclasses override `tenant_queryset` when their rows are
    not plain `TenantOwned` rows (e.g. prompt templates, which include the built-ins)."""

    # Django looks for admin/<app>/<model>/... templates first: those are the operator site's
    # (links into /admin/), so this site uses the generic ones unless an admin names its own.
    change_list_template = "admin/change_list.html"
    change_form_template = "admin/change_form.html"
    delete_confirmation_template = "admin/delete_confirmation.html"
    delete_selected_confirmation_template = "admin/delete_selected_confirmation.html"
    object_history_template = "admin/object_history.html"

    def active_tenant(self, request) -> Tenant:
        return TenantAdminSite.active_tenant(request)

    def tenant_queryset(self, request):
        """The rows of the active tenant; the only starting point of every query here."""
        return owned_list(self.model, tenant=self.active_tenant(request))

    def get_queryset(self, request):
        queryset = self.tenant_queryset(request)
        ordering = self.get_ordering(request)
        return queryset.order_by(*ordering) if ordering else queryset

    def get_object(self, request, object_id, from_field=None):
        # Django answers a missing object by redirecting to the index; here it is a plain 404, so
        # another tenant's id and a missing one look the same.
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            raise Http404(f"No {self.opts.verbose_name} with this id.")
        return obj

    def get_exclude(self, request, obj=None):
        return [*(super().get_exclude(request, obj) or []), "tenant"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        related = db_field.related_model
        if related is Tenant:
            kwargs["queryset"] = Tenant.objects.filter(pk=self.active_tenant(request).pk)
        elif issubclass(related, TenantOwned):
            kwargs["queryset"] = owned_list(related, tenant=self.active_tenant(request))
        elif related is get_user_model():
            kwargs["queryset"] = related.objects.filter(
                memberships__tenant=self.active_tenant(request)
            ).distinct()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        # The tenant comes from the session, never from the form (which has no tenant field).
        obj.tenant = self.active_tenant(request)
        super().save_model(request, obj, form, change)

    # The site has already checked the role (admin or owner of the active tenant); Django's
    # per-model permissions are the platform staff's and play no part here.
    def has_module_permission(self, request):
        return self.admin_site.has_permission(request)

    def has_view_permission(self, request, obj=None):
        return self.admin_site.has_permission(request)

    def has_add_permission(self, request):
        return self.admin_site.has_permission(request)

    def has_change_permission(self, request, obj=None):
        return self.admin_site.has_permission(request)

    def has_delete_permission(self, request, obj=None):
        return self.admin_site.has_permission(request)


class ReadOnlyTenantAdmin(TenantScopedAdmin):
    """A tenant's rows to look at only: records (audit, exports) or rows one page of the console
    writes through its service (ranking weights)."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class PageAnnotatedChangeList(ChangeList):
    """A change list whose page of rows gets what it shows from other tables in one query per
    table (`model_admin.annotate_page`), not one per row. The rows are read here once; the list
    renders these same objects (the queryset keeps them)."""

    def get_results(self, request):
        super().get_results(request)
        self.model_admin.annotate_page(request, list(self.result_list))


def asker(obj) -> object:
    """Who did it, for a row with `user` and `api_key_prefix`: the user, else "key <prefix>"."""
    if obj.user_id:
        return obj.user
    return f"key {obj.api_key_prefix}" if obj.api_key_prefix else "-"
