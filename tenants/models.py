"""Tenants (law firms), their members' roles, and tenant-bound API keys.

Every tenant-owned model elsewhere inherits `TenantOwned`: a non-null tenant FK, and a manager
whose `for_tenant()` is the only sanctioned way to start a query (selectors build on it).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

DEFAULT_MEMO_LEGEND = "Privileged & Confidential \u2014 Attorney Work Product"


class Tenant(models.Model):
    slug = models.SlugField(max_length=63, unique=True)
    name = models.CharField(max_length=200)
    settings = models.JSONField(default=dict, blank=True)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Fair-use limits of this tenant; empty means the RAG_* setting of the same meaning, 0 unlimited.
    max_passages_per_document = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty: RAG_MAX_PASSAGES_PER_DOCUMENT. 0: unlimited."
    )
    max_documents = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty: RAG_TENANT_MAX_DOCUMENTS. 0: unlimited."
    )
    max_bytes = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Stored file bytes. Empty: RAG_TENANT_MAX_BYTES. 0: unlimited."
    )
    max_concurrent_ingests = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Documents queued or processing. Empty: RAG_TENANT_MAX_CONCURRENT_INGESTS. 0: unlimited.",
    )
    # Printed at the top of every page of the firm's memos (rag.exports); firms word it their own way.
    memo_legend = models.CharField(
        max_length=200,
        default=DEFAULT_MEMO_LEGEND,
        help_text="The privilege legend at the top of every page of a memo exported from an answer.",
    )
    # When the fair ingestion queue last started one of this tenant's documents (rag.ingest.queue).
    ingest_turn_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    _LIMIT_SETTINGS = {
        "max_passages_per_document": "RAG_MAX_PASSAGES_PER_DOCUMENT",
        "max_documents": "RAG_TENANT_MAX_DOCUMENTS",
        "max_bytes": "RAG_TENANT_MAX_BYTES",
        "max_concurrent_ingests": "RAG_TENANT_MAX_CONCURRENT_INGESTS",
    }

    def limit(self, name: str) -> int:
        """This tenant's fair-use limit `name` (e.g. "max_documents"): its own value, else the
        setting's; 0 means unlimited."""
        own = getattr(self, name)
        return own if own is not None else getattr(settings, self._LIMIT_SETTINGS[name])


class TenantOwnedQuerySet(models.QuerySet):
    def for_tenant(self, tenant: Tenant) -> TenantOwnedQuerySet:
        """Rows of `tenant` only. A missing tenant is a programming error, never "all rows"."""
        if tenant is None or tenant.pk is None:
            raise ValueError("a saved tenant is required to scope a query")
        return self.filter(tenant=tenant)


class TenantOwned(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")

    objects = TenantOwnedQuerySet.as_manager()

    class Meta:
        abstract = True


class Role(models.TextChoices):
    """Ordered from least to most privileged; `Role.at_least` compares them."""

    VIEWER = "viewer", "Viewer"
    MEMBER = "member", "Member"
    ADMIN = "admin", "Admin"
    OWNER = "owner", "Owner"

    @classmethod
    def rank(cls, role: str) -> int:
        return list(cls.values).index(role)

    @classmethod
    def at_least(cls, role: str, minimum: str) -> bool:
        return cls.rank(role) >= cls.rank(minimum)


class Membership(TenantOwned):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "user"], name="membership_unique_tenant_user")
        ]
        ordering = ["tenant__name"]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant} ({self.role})"


API_KEY_PREFIX_LENGTH = 8
_prefix_validator = RegexValidator(r"^[a-z0-9]{8}$", "prefix is 8 lowercase letters or digits")


def hash_api_key_secret(secret: str) -> str:
    """SHA-256 of the secret part. Keys are 256-bit random, so a fast hash is safe (no guessing)."""
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKey(TenantOwned):
    """A tenant-bound credential: `lx_<prefix>_<secret>`. Only the hash of the secret is stored;
    the full key is shown once, at creation."""

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=API_KEY_PREFIX_LENGTH, unique=True, validators=[_prefix_validator])
    hashed_secret = models.CharField(max_length=64)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    # Provenance: the person accountable for the key (for a key made with a key, that key's
    # person), the key it was made with, and the channel. Removing or demoting that person revokes
    # or caps the key (tenants.credentials); `created_via` is never blank for a new key.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by_key = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_via = models.CharField(
        max_length=40, help_text="What made the key: console, api, operator admin, a command."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"
        constraints = [
            models.CheckConstraint(condition=~models.Q(created_via=""), name="api_key_has_provenance")
        ]

    def __str__(self) -> str:
        return f"{self.name} (lx_{self.prefix}_…)"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def secret_matches(self, secret: str) -> bool:
        return hmac.compare_digest(self.hashed_secret, hash_api_key_secret(secret))

    @staticmethod
    def generate() -> tuple[str, str]:
        """A fresh (prefix, secret) pair."""
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        prefix = "".join(secrets.choice(alphabet) for _ in range(API_KEY_PREFIX_LENGTH))
        return prefix, secrets.token_urlsafe(32)

    def mark_used(self, *, resolution_seconds: int) -> None:
        """Record use, writing at most once per `resolution_seconds`."""
        now = timezone.now()
        if self.last_used_at and (now - self.last_used_at).total_seconds() < resolution_seconds:
            return
        ApiKey.objects.filter(pk=self.pk).update(last_used_at=now)
        self.last_used_at = now


class InvitationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    DECLINED = "declined", "Declined"
    CANCELLED = "cancelled", "Cancelled"


class Invitation(TenantOwned):
    """An offer to join a tenant with a role, pending until the invitee accepts it (the e-mailed
    link, or in the app when it names their account). Nothing about the invitee's account is shown
    to the firm: only the `identifier` its admin typed."""

    identifier = models.CharField(max_length=254, help_text="The username or e-mail address as typed.")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    # The account the identifier named when the invitation was made (None: an address nobody used,
    # or one several accounts use; the link then creates or picks the account).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="invitations"
    )
    email = models.EmailField(blank=True, help_text="Where the link was mailed ('' when nowhere).")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=16, choices=InvitationStatus.choices, default=InvitationStatus.PENDING
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    responded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["tenant", "status"])]

    def __str__(self) -> str:
        return (
            f"pending invitation for {self.identifier}"
            if self.is_open
            else f"invitation for {self.identifier}"
        )

    @staticmethod
    def hash_token(token: str) -> str:
        """SHA-256 of a link's token (256-bit random, so a fast hash is safe); only this is kept."""
        return hashlib.sha256(token.encode()).hexdigest()

    @property
    def is_open(self) -> bool:
        """Pending and not expired: it can still be accepted."""
        return self.status == InvitationStatus.PENDING and self.expires_at > timezone.now()


class TenantChoice(models.Model):
    """The firm a user last chose (the switcher, the chooser): a fresh session acts for it, so a
    login never lands in a firm the user did not pick."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tenant_choice"
    )
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    chosen_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} last chose {self.tenant}"
