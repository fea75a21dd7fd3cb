"""Writes for tenants, memberships and API keys, and resolving the tenant a credential acts for."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ragsite.exceptions import InvalidInput, NoActiveTenant, NotFound

from . import selectors
from .models import ApiKey, Membership, Role, Tenant, hash_api_key_secret

API_KEY_SCHEME = "lx"
SESSION_TENANT_KEY = "lexrag_active_tenant_id"


@dataclass(frozen=True)
class TenantCredential:
    """What a request acts as: a tenant and a role, from a session membership or an API key."""

    tenant: Tenant
    role: str
    api_key: ApiKey | None = None

    def has_role(self, minimum: str) -> bool:
        return Role.at_least(self.role, minimum)


def tenant_create(*, slug: str, name: str, settings_json: dict | None = None) -> Tenant:
    tenant = Tenant(slug=slug, name=name, settings=settings_json or {})
    tenant.full_clean()
    tenant.save()
    return tenant


def membership_set(*, tenant: Tenant, user, role: str = Role.MEMBER) -> Membership:
    """Add `user` to `tenant`, or change their role there."""
    membership = Membership.objects.filter(tenant=tenant, user=user).first() or Membership(
        tenant=tenant, user=user
    )
    membership.role = role
    membership.full_clean()
    membership.save()
    return membership


def api_key_create(
    *, tenant: Tenant, name: str, role: str = Role.MEMBER, created_by=None
) -> tuple[ApiKey, str]:
    """Create a key; returns it with the full key text, which is never retrievable again."""
    prefix, secret = ApiKey.generate()
    api_key = ApiKey(
        tenant=tenant,
        name=name,
        role=role,
        prefix=prefix,
        hashed_secret=hash_api_key_secret(secret),
        created_by=created_by,
    )
    api_key.full_clean()
    api_key.save()
    return api_key, f"{API_KEY_SCHEME}_{prefix}_{secret}"


def api_key_revoke(*, tenant: Tenant, key_id) -> ApiKey:
    api_key = selectors.api_key_get(tenant=tenant, key_id=key_id)
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


def api_key_authenticate(*, raw_key: str) -> TenantCredential | None:
    """The credential for a presented key, or None if it is malformed, unknown, revoked or wrong."""
    scheme, _, rest = raw_key.strip().partition("_")
    prefix, _, secret = rest.partition("_")
    if scheme != API_KEY_SCHEME or len(prefix) != 8 or not secret:
        return None
    api_key = selectors.api_key_find_by_prefix(prefix=prefix)
    if api_key is None or api_key.is_revoked or not api_key.tenant.is_active:
        return None
    if not api_key.secret_matches(secret):
        return None
    api_key.mark_used(resolution_seconds=settings.API_KEY_LAST_USED_RESOLUTION_SECONDS)
    return TenantCredential(tenant=api_key.tenant, role=api_key.role, api_key=api_key)


def session_credential(*, user, session) -> TenantCredential:
    """The tenant a logged-in user acts for: the one chosen in this session if still a member,
    otherwise their first membership (remembered in the session)."""
    memberships = selectors.membership_list_for_user(user=user)
    chosen = session.get(SESSION_TENANT_KEY)
    membership = (chosen and memberships.filter(tenant_id=chosen).first()) or memberships.first()
    if membership is None:
        raise NoActiveTenant()
    if chosen != membership.tenant_id:
        session[SESSION_TENANT_KEY] = membership.tenant_id
    return TenantCredential(tenant=membership.tenant, role=membership.role)


def session_tenant_switch(*, user, session, slug: str) -> TenantCredential:
    """Make `slug` the session's active tenant; only among the user's own memberships."""
    if not slug:
        raise InvalidInput("Give the slug of the tenant to switch to.", details={"tenant": "required"})
    membership = selectors.membership_list_for_user(user=user).filter(tenant__slug=slug).first()
    if membership is None:
        raise NotFound("Tenant not found.")
    session[SESSION_TENANT_KEY] = membership.tenant_id
    return TenantCredential(tenant=membership.tenant, role=membership.role)


@transaction.atomic
def demo_tenant_setup(*, slug: str, name: str, user) -> Tenant:
    """Idempotently create a tenant with `user` as its owner (used by `manage.py demo`)."""
    tenant = Tenant.objects.filter(slug=slug).first() or tenant_create(slug=slug, name=name)
    membership_set(tenant=tenant, user=user, role=Role.OWNER)
    return tenant
