"""Credentials follow people: a person's API keys in a firm never outrank the person there.

When a membership ends (removed by an admin, left, deleted with its account or its firm by the
operator) the keys that person is accountable for in that firm (`ApiKey.created_by`, which a key
made with a key inherits) are revoked; when their role drops, those keys above the new role are
capped to it. Signals rather than calls in each service, because the operator's admin (inline
memberships, deleting a user) changes memberships without going through `tenants.services`, and a
path that forgot the call would leave a live key behind.
"""

from __future__ import annotations

from django.db.models.signals import post_save, pre_delete
from django.dispatch import receiver
from django.utils import timezone

from .models import ApiKey, Membership, Role


def api_keys_follow_member(*, tenant, user, role: str | None) -> int:
    """Revoke (`role` None) or cap to `role` the live keys `user` is accountable for in `tenant`;
    returns how many keys changed."""
    keys = ApiKey.objects.for_tenant(tenant).filter(created_by=user, revoked_at__isnull=True)
    if role is None:
        return keys.update(revoked_at=timezone.now())
    above = [value for value in Role.values if Role.rank(value) > Role.rank(role)]
    return keys.filter(role__in=above).update(role=role)


@receiver(pre_delete, sender=Membership, dispatch_uid="tenants.credentials.membership_ended")
def _membership_ended(sender, instance: Membership, **kwargs) -> None:
    # pre_delete: when the account itself is deleted, `created_by` is still set here (the
    # SET_NULL update comes after the pre_delete signals).
    api_keys_follow_member(tenant=instance.tenant, user=instance.user_id, role=None)


@receiver(post_save, sender=Membership, dispatch_uid="tenants.credentials.membership_saved")
def _membership_saved(sender, instance: Membership, created: bool, **kwargs) -> None:
    if not created:
        api_keys_follow_member(tenant=instance.tenant, user=instance.user_id, role=instance.role)
