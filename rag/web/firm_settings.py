"""What the staff UI's Settings page shows: the firm's configuration as it is in effect, read-only
(#21). Every value is the tenant's own, else the platform's default, and says which."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from rag.selectors import ranking_weights_get, ranking_weights_row
from templates_admin.selectors import template_list
from tenants.models import Role, Tenant
from tenants.selectors import membership_list

# (Tenant field, what it limits, whether the value is a size in bytes), in display order.
_LIMITS = [
    ("max_documents", "Documents", False),
    ("max_bytes", "Stored file size", True),
    ("max_concurrent_ingests", "Documents being indexed at once", False),
    ("max_passages_per_document", "Passages per document", False),
]

# The model each remote provider answers with; the offline provider has none.
_PROVIDER_MODELS = {"anthropic": "ANTHROPIC_MODEL", "ollama": "OLLAMA_MODEL"}


@dataclass(frozen=True)
class Limit:
    label: str
    value: int  # 0: unlimited
    is_bytes: bool
    is_own: bool  # set for this firm, else the platform's default


def firm_settings(*, tenant: Tenant) -> dict:
    """The tenant's configuration for the Settings page: templates, ranking weights, limits, the
    model provider, the memos' privilege legend and the firm's admins."""
    return {
        "templates": template_list(tenant=tenant),
        "default_template_id": settings.RAG_DEFAULT_TEMPLATE,
        "weights": ranking_weights_get(tenant=tenant),
        "weights_are_own": ranking_weights_row(tenant=tenant) is not None,
        "limits": firm_limits(tenant=tenant),
        "provider": settings.RAG_LLM_PROVIDER,
        "provider_model": provider_model(settings.RAG_LLM_PROVIDER),
        "admins": firm_admins(tenant=tenant),
        "memo_legend": tenant.memo_legend,
    }


def firm_limits(*, tenant: Tenant) -> list[Limit]:
    """The tenant's fair-use limits in effect (its own value, else the setting's)."""
    return [
        Limit(
            label=label, value=tenant.limit(name), is_bytes=is_bytes, is_own=getattr(tenant, name) is not None
        )
        for name, label, is_bytes in _LIMITS
    ]


def provider_model(provider: str) -> str:
    """The model `provider` answers with, or "" for the offline extractive provider."""
    setting = _PROVIDER_MODELS.get((provider or "").strip().lower())
    return getattr(settings, setting, "") if setting else ""


def firm_admins(*, tenant: Tenant) -> list:
    """The tenant's admins and owners (their memberships, users loaded), by username."""
    return [
        membership
        for membership in membership_list(tenant=tenant).order_by("user__username")
        if Role.at_least(membership.role, Role.ADMIN)
    ]
