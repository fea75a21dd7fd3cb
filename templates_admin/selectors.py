"""Reads. A tenant sees its own templates and the built-ins (tenant NULL); its own template with a
built-in's `template_id` shadows that built-in. Another tenant's template is as unknown as a missing
one: the same `NotFound`."""

from __future__ import annotations

from django.db.models import F, QuerySet

from ragsite.exceptions import NotFound
from tenants.models import Tenant

from .models import PromptTemplate, PromptTemplateVersion


def template_list(*, tenant: Tenant) -> QuerySet[PromptTemplate]:
    """The tenant's own templates plus the built-ins it has not overridden, by template_id."""
    own_ids = PromptTemplate.objects.filter(tenant=tenant).values("template_id")
    return (
        PromptTemplate.objects.visible_to(tenant)
        .exclude(tenant__isnull=True, template_id__in=own_ids)
        .order_by("template_id")
    )


def template_list_all() -> QuerySet[PromptTemplate]:
    """Every template of every tenant and the built-ins (built-ins first, then by tenant and id).
    For the Django admin only, whose staff see all tenants; tenant code uses `template_list`."""
    return PromptTemplate.objects.select_related("tenant").order_by(
        F("tenant").asc(nulls_first=True), "template_id"
    )


def template_get(*, tenant: Tenant, template_id: str) -> PromptTemplate:
    """The tenant's own template `template_id`, else the built-in one, else `NotFound` (one query)."""
    template = (
        PromptTemplate.objects.visible_to(tenant)
        .filter(template_id=template_id)
        .order_by(F("tenant").asc(nulls_last=True))
        .first()
    )
    if template is None:
        raise NotFound("Prompt template not found.")
    return template


_BY_VERSION: dict[tuple[int, int], PromptTemplate] = {}
_BY_VERSION_LIMIT = 512


def template_get_by_version(*, pk: int, version: int) -> PromptTemplate:
    """The template row `pk` as of `version`, from a per-process memo: every change of a template
    bumps its version, so (pk, version) always names the same content. For the query path, which
    resolves (pk, version) through a tenant-scoped query first (rag.selectors.query_snapshot_get).
    Callers must not modify the returned object: it is shared."""
    key = (pk, version)
    template = _BY_VERSION.get(key)
    if template is None:
        template = PromptTemplate.objects.filter(pk=pk, version=version).first()
        if template is None:  # changed or deleted since the snapshot was read
            raise NotFound("Prompt template not found.")
        if len(_BY_VERSION) >= _BY_VERSION_LIMIT:
            _BY_VERSION.clear()
        _BY_VERSION[key] = template
    return template


def template_version_list(*, tenant: Tenant, template_id: str) -> QuerySet[PromptTemplateVersion]:
    """The history of the template the tenant sees as `template_id`, newest first."""
    template = template_get(tenant=tenant, template_id=template_id)
    return PromptTemplateVersion.objects.filter(template=template).order_by("-version")


def template_versions_of(*, template: PromptTemplate) -> QuerySet[PromptTemplateVersion]:
    """The history of `template` (a row the caller has already scoped or, in the admin, may see
    whatever its tenant), newest first."""
    return (
        PromptTemplateVersion.objects.filter(template=template)
        .select_related("created_by")
        .order_by("-version")
    )


def template_version_get(*, tenant: Tenant, template_id: str, version: int) -> PromptTemplateVersion:
    try:
        return template_version_list(tenant=tenant, template_id=template_id).get(version=version)
    except (PromptTemplateVersion.DoesNotExist, ValueError, TypeError) as exc:
        raise NotFound("Prompt template version not found.") from exc
