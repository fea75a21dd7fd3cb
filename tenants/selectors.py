"""Reads. Every tenant-owned lookup takes `tenant` as its first required keyword, and "missing" and
"belongs to another tenant" raise the same `NotFound`. Other apps scope through `owned_get` /
`owned_list` instead of touching `Model.objects` directly."""

from __future__ import annotations

from functools import cache

from django.db import connection
from django.db.models import Model, QuerySet
from django.utils import timezone

from ragsite.exceptions import NotFound
from ragsite.rows import model_from_row, select_columns

from .models import ApiKey, Invitation, InvitationStatus, Membership, Tenant, TenantOwned


def owned_list(model: type[TenantOwned], *, tenant: Tenant) -> QuerySet:
    """All rows of a tenant-owned `model` that belong to `tenant`."""
    return model.objects.for_tenant(tenant)


def owned_get(model: type[TenantOwned], *, tenant: Tenant, **lookup) -> Model:
    """One row of `tenant`, or `NotFound` whether it is missing or another tenant's."""
    try:
        return owned_list(model, tenant=tenant).get(**lookup)
    except (model.DoesNotExist, ValueError, TypeError) as exc:
        # ValueError/TypeError: a malformed id is as unknown as a missing one.
        raise NotFound(f"{model._meta.verbose_name.capitalize()} not found.") from exc


def tenant_get_by_slug(*, slug: str) -> Tenant:
    try:
        return Tenant.objects.get(slug=slug, is_active=True)
    except Tenant.DoesNotExist as exc:
        raise NotFound("Tenant not found.") from exc


def membership_list_for_user(*, user) -> QuerySet[Membership]:
    """The user's memberships in active tenants, for the tenant switcher."""
    return Membership.objects.filter(user=user, tenant__is_active=True).select_related("tenant")


def membership_get(*, tenant: Tenant, user) -> Membership:
    return owned_get(Membership, tenant=tenant, user=user)


def membership_list(*, tenant: Tenant) -> QuerySet[Membership]:
    return owned_list(Membership, tenant=tenant).select_related("user")


def membership_get_by_id(*, tenant: Tenant, membership_id) -> Membership:
    """One membership of `tenant` by id; `NotFound` if missing or another tenant's."""
    return owned_get(Membership, tenant=tenant, pk=membership_id)


def membership_role_of(*, tenant: Tenant, user) -> str | None:
    """`user`'s role in `tenant`, or None when they are not a member (or not a saved user)."""
    if user is None or user.pk is None:
        return None
    return owned_list(Membership, tenant=tenant).filter(user=user).values_list("role", flat=True).first()


def invitation_list(*, tenant: Tenant) -> QuerySet[Invitation]:
    """The tenant's invitations, newest first (the console shows only what its admin typed)."""
    return owned_list(Invitation, tenant=tenant).select_related("invited_by")


def invitation_get(*, tenant: Tenant, invitation_id) -> Invitation:
    return owned_get(Invitation, tenant=tenant, pk=invitation_id)


def invitation_list_for_user(*, user) -> QuerySet[Invitation]:
    """Open invitations addressed to `user`'s account, in active tenants: the ones they may accept
    or decline in the app (an invitation naming no account is answered by its link only)."""
    return Invitation.objects.filter(
        user=user, status=InvitationStatus.PENDING, expires_at__gt=timezone.now(), tenant__is_active=True
    ).select_related("tenant", "invited_by")


def invitation_get_by_token(*, token: str) -> Invitation | None:
    """The invitation a link's token opens, or None. Not tenant-scoped: the token names it."""
    found = Invitation.objects.select_related("tenant", "invited_by").filter(
        token_hash=Invitation.hash_token(token)
    )
    return found.first()


def api_key_list(*, tenant: Tenant) -> QuerySet[ApiKey]:
    return owned_list(ApiKey, tenant=tenant)


def api_key_get(*, tenant: Tenant, key_id) -> ApiKey:
    return owned_get(ApiKey, tenant=tenant, pk=key_id)


def api_key_find_by_prefix(*, prefix: str) -> ApiKey | None:
    """The key with this prefix, its tenant loaded, or None. Authentication only: the key itself
    names its tenant, so this lookup is not tenant-scoped.

    It runs on every API-key request, so it is one hand-written join: the ORM's version spent
    five times the CPU of the query itself compiling it."""
    with connection.cursor() as cursor:
        cursor.execute(_api_key_with_tenant_sql(), [prefix])
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(ApiKey._meta.concrete_fields)
    api_key = model_from_row(ApiKey, row[:split])
    api_key.tenant = model_from_row(Tenant, row[split:])
    return api_key


@cache
def _api_key_with_tenant_sql() -> str:
    keys, tenants = ApiKey._meta.db_table, Tenant._meta.db_table
    return (
        f"SELECT {select_columns(ApiKey, 'k')}, {select_columns(Tenant, 't')} "  # noqa: S608 - model names
        f"FROM {keys} k JOIN {tenants} t ON t.{Tenant._meta.pk.column} = k.tenant_id WHERE k.prefix = %s"
    )
