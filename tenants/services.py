"""Writes for tenants, memberships and API keys, and resolving the tenant a credential acts for."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ragsite.exceptions import (
    Conflict,
    InvalidInput,
    NoActiveTenant,
    NotFound,
    PermissionDenied,
    TenantChoiceRequired,
)

from . import selectors
from .models import ApiKey, Membership, Role, Tenant, TenantChoice, hash_api_key_secret

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


# --- Members and roles ----------------------------------------------------------------------------
# The rules, here only, so the console and any REST API apply the same ones:
#   * only an admin or owner of the tenant manages its members (invite, change role, remove);
#   * only an owner grants the owner role, and only an owner changes an owner's role or removes one;
#   * an admin cannot change their own role or remove themselves (they could only lock themselves
#     out): another admin or an owner does it. An owner may step down or leave while another owner
#     remains;
#   * the last owner can be neither demoted nor removed: make someone else owner first.


def _manager_role(*, tenant: Tenant, actor) -> str:
    """`actor`'s role in `tenant` when it is admin or owner; `PermissionDenied` otherwise."""
    role = selectors.membership_role_of(tenant=tenant, user=actor)
    if role is None or not Role.at_least(role, Role.ADMIN):
        raise PermissionDenied(f"Only an admin or owner of {tenant.name} can manage its members.")
    return role


def _valid_role(role: str) -> str:
    if role not in Role.values:
        raise InvalidInput(
            f"Unknown role {role!r}: choose one of {', '.join(Role.values)}.", details={"role": "invalid"}
        )
    return role


def _check_grant(*, tenant: Tenant, role: str, actor_role: str) -> None:
    if role == Role.OWNER and actor_role != Role.OWNER:
        raise PermissionDenied(f"Only an owner of {tenant.name} can make someone an owner.")


def _check_not_last_owner(*, tenant: Tenant, membership: Membership) -> None:
    if membership.role != Role.OWNER:
        return
    owners = selectors.membership_list(tenant=tenant).filter(role=Role.OWNER).count()
    if owners <= 1:
        raise Conflict(
            f"{membership.user} is the last owner of {tenant.name}: make another member owner first.",
            details={"membership": "last_owner"},
        )


def _lock_owners(*, tenant: Tenant) -> None:
    """Lock the tenant's owner rows until the transaction ends, so that two owners demoting or
    removing each other at once cannot leave the tenant without an owner."""
    list(selectors.membership_list(tenant=tenant).filter(role=Role.OWNER).select_for_update().values("pk"))


def membership_manage_refusal(*, tenant: Tenant, membership: Membership, actor) -> str | None:
    """Why `actor` may neither change nor remove `membership`, or None when they may (the
    last-owner rule aside). `PermissionDenied` when `actor` manages no member of `tenant`."""
    actor_role = _manager_role(tenant=tenant, actor=actor)
    if membership.role == Role.OWNER and actor_role != Role.OWNER:
        return f"Only an owner can change or remove an owner ({membership.user.get_username()})."
    if membership.user_id == actor.pk and actor_role != Role.OWNER:
        return "You cannot change your own role or remove yourself: ask another admin or an owner."
    return None


def _check_manage(*, tenant: Tenant, membership: Membership, actor) -> str:
    refusal = membership_manage_refusal(tenant=tenant, membership=membership, actor=actor)
    if refusal:
        raise PermissionDenied(refusal)
    return _manager_role(tenant=tenant, actor=actor)


def membership_role_change_check(*, tenant: Tenant, membership: Membership, role: str, changed_by) -> None:
    """Raise the error `membership_role_change` would raise for these arguments, writing nothing."""
    _valid_role(role)
    actor_role = _check_manage(tenant=tenant, membership=membership, actor=changed_by)
    _check_grant(tenant=tenant, role=role, actor_role=actor_role)
    if role != Role.OWNER:
        _check_not_last_owner(tenant=tenant, membership=membership)


@transaction.atomic
def membership_role_change(*, tenant: Tenant, membership_id, role: str, changed_by) -> Membership:
    """Give the member `membership_id` of `tenant` the role `role`, by the rules above."""
    _lock_owners(tenant=tenant)
    membership = selectors.membership_get_by_id(tenant=tenant, membership_id=membership_id)
    membership_role_change_check(tenant=tenant, membership=membership, role=role, changed_by=changed_by)
    if membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def membership_remove_check(*, tenant: Tenant, membership: Membership, removed_by) -> None:
    """Raise the error `membership_remove` would raise for these arguments, writing nothing."""
    _check_manage(tenant=tenant, membership=membership, actor=removed_by)
    _check_not_last_owner(tenant=tenant, membership=membership)


@transaction.atomic
def membership_remove(*, tenant: Tenant, membership_id, removed_by) -> Membership:
    """Take the member `membership_id` out of `tenant`, by the rules above. Their account stays
    (it may belong to other firms); returns the deleted membership."""
    _lock_owners(tenant=tenant)
    membership = selectors.membership_get_by_id(tenant=tenant, membership_id=membership_id)
    membership_remove_check(tenant=tenant, membership=membership, removed_by=removed_by)
    membership.delete()
    return membership


@transaction.atomic
def membership_leave(*, tenant: Tenant, user) -> Membership:
    """`user` leaves `tenant` of their own accord (any role; the last owner must hand over
    first). Their keys there are revoked (tenants.credentials); their account stays."""
    _lock_owners(tenant=tenant)
    membership = selectors.membership_get(tenant=tenant, user=user)
    _check_not_last_owner(tenant=tenant, membership=membership)
    membership.delete()
    return membership


def _creator_role(*, tenant: Tenant, created_by, created_by_key: ApiKey | None) -> str | None:
    """The highest role a key made by this creator may have, or None for no limit (the platform
    operator, or a command run on the server). `PermissionDenied` for a creator with no say here."""
    if created_by_key is not None:
        if created_by_key.tenant_id != tenant.pk or created_by_key.is_revoked:
            raise PermissionDenied(
                "This key cannot create keys for this firm.", details={"tenant": "not_yours"}
            )
        return created_by_key.role
    if created_by is None or created_by.is_superuser:
        return None
    role = selectors.membership_role_of(tenant=tenant, user=created_by)
    if role is None:
        raise PermissionDenied(
            f"Only a member of {tenant.name} can create its keys.", details={"tenant": "not_a_member"}
        )
    return role


def api_key_create_check(*, tenant: Tenant, role: str, created_by=None, created_by_key=None) -> None:
    """Raise the error `api_key_create` would raise for these arguments, writing nothing:
    `InvalidInput` for an unknown role, `PermissionDenied` for a creator with no say in `tenant`
    (`details.tenant`) or a role above the creator's (`details.role`)."""
    ceiling = _creator_role(tenant=tenant, created_by=created_by, created_by_key=created_by_key)
    if ceiling is not None and Role.rank(_valid_role(role)) > Role.rank(ceiling):
        raise PermissionDenied(
            f"A {ceiling} credential cannot create a key with the {role} role.",
            details={"role": "above_creator"},
        )


def api_key_create(
    *,
    tenant: Tenant,
    name: str,
    created_via: str,
    role: str = Role.MEMBER,
    created_by=None,
    created_by_key=None,
) -> tuple[ApiKey, str]:
    """Create a key; returns it with the full key text, which is never retrievable again.

    Every key records what made it: `created_via` (the channel: "console", "api", "operator admin",
    a command's name; required), and the person (`created_by`) and/or key (`created_by_key`) when
    there is one. A key made with a key is accountable to that key's person. The new key's role is
    at most its creator's (a key's, or the person's in this firm): `PermissionDenied` otherwise."""
    if not created_via:
        raise ValueError("api_key_create needs created_via: say what makes the key")
    api_key_create_check(tenant=tenant, role=role, created_by=created_by, created_by_key=created_by_key)
    if created_by_key is not None and created_by is None:
        created_by = created_by_key.created_by
    prefix, secret = ApiKey.generate()
    api_key = ApiKey(
        tenant=tenant,
        name=name,
        role=role,
        prefix=prefix,
        hashed_secret=hash_api_key_secret(secret),
        created_by=created_by,
        created_by_key=created_by_key,
        created_via=created_via,
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


def _remember_choice(*, user, tenant: Tenant) -> None:
    TenantChoice.objects.update_or_create(user=user, defaults={"tenant": tenant})


def session_credential(*, user, session) -> TenantCredential:
    """The tenant a logged-in user acts for, only ever one they chose: the one chosen in this
    session if they are still a member; else the firm they last chose (remembered across logins);
    else their only firm. A user of several firms with no choice gets `TenantChoiceRequired` (the
    app asks, `/accounts/firms/`), never the first by name; a user of none `NoActiveTenant`."""
    memberships = selectors.membership_list_for_user(user=user)
    chosen = session.get(SESSION_TENANT_KEY)
    membership = chosen and memberships.filter(tenant_id=chosen).first()
    if not membership:
        remembered = TenantChoice.objects.filter(user=user).values_list("tenant_id", flat=True).first()
        membership = remembered and memberships.filter(tenant_id=remembered).first()
    if not membership:
        only = list(memberships[:2])
        if not only:
            raise NoActiveTenant()
        if len(only) > 1:
            raise TenantChoiceRequired()
        membership = only[0]
    if chosen != membership.tenant_id:
        session[SESSION_TENANT_KEY] = membership.tenant_id
    return TenantCredential(tenant=membership.tenant, role=membership.role)


def session_tenant_switch(*, user, session, slug: str) -> TenantCredential:
    """Make `slug` the session's active tenant, only among the user's own memberships, and
    remember it as the firm their next login acts for."""
    if not slug:
        raise InvalidInput("Give the slug of the tenant to switch to.", details={"tenant": "required"})
    membership = selectors.membership_list_for_user(user=user).filter(tenant__slug=slug).first()
    if membership is None:
        raise NotFound("Tenant not found.")
    session[SESSION_TENANT_KEY] = membership.tenant_id
    _remember_choice(user=user, tenant=membership.tenant)
    return TenantCredential(tenant=membership.tenant, role=membership.role)


@transaction.atomic
def demo_tenant_setup(*, slug: str, name: str, user) -> Tenant:
    """Idempotently create a tenant with `user` as its owner (used by `manage.py demo`)."""
    tenant = Tenant.objects.filter(slug=slug).first() or tenant_create(slug=slug, name=name)
    membership_set(tenant=tenant, user=user, role=Role.OWNER)
    return tenant
