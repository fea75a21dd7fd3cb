"""DRF permissions: a request must act for a tenant, with at least the view's role."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from ragsite.exceptions import NoActiveTenant, PermissionDenied

from .models import Role
from .services import TenantCredential


def required_role(view, method: str) -> str:
    """`view.required_role` is a role, or a dict of HTTP method -> role (default: viewer)."""
    spec = getattr(view, "required_role", Role.VIEWER)
    if isinstance(spec, dict):
        return spec.get(method, spec.get("*", Role.VIEWER))
    return spec


class HasTenant(BasePermission):
    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False  # DRF answers 401 Not Authenticated
        credential = request.auth
        if not isinstance(credential, TenantCredential):
            raise getattr(request._request, "no_tenant_reason", None) or NoActiveTenant()
        minimum = required_role(view, request.method)
        if not credential.has_role(minimum):
            raise PermissionDenied(f"This needs the {minimum} role or higher.")
        return True


class IsAuthenticatedUser(BasePermission):
    """A logged-in person, with or without a tenant (for choosing one)."""

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated)


class IsPerson(BasePermission):
    """A signed-in person (a session), for what only a person does: answering their invitations,
    leaving a firm. An API key belongs to a firm, not a person: 403 `PermissionDenied`."""

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False  # DRF answers 401 Not Authenticated
        if request.user.pk is None:
            raise PermissionDenied(
                "An API key belongs to a firm, not a person: invitations and leaving a firm are for "
                "a signed-in user (session)."
            )
        return True
