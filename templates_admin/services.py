"""Writes for prompt templates. Every write goes through `template_save`, which bumps `version` and
records the new state as a `PromptTemplateVersion` in the same transaction.

Tenants never change a built-in (tenant NULL): `template_update` (and `template_revert`) of a
built-in create the tenant's own copy with the changes, under the same `template_id`, which from
then on shadows the built-in for that tenant; deleting that copy brings the built-in back. Built-ins
themselves are edited in the Django admin only.

Errors: Django's `ValidationError` for invalid values (from `full_clean`), `Conflict` for a
duplicate `template_id` within a tenant, `NotFound` for an unknown (or another tenant's) template,
`PermissionDenied` for deleting a built-in.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from ragsite.exceptions import Conflict, NotFound, PermissionDenied
from tenants.models import Tenant

from . import selectors
from .models import PromptTemplate, PromptTemplateVersion

CREATE_FIELDS = ("template_id", *PromptTemplate.EDITABLE_FIELDS)


@transaction.atomic
def template_save(*, template: PromptTemplate, user=None) -> PromptTemplate:
    """Save an already validated `template` as its next version (1 when new) and record that version.

    The one write path: services call it after `full_clean()`, the admin after its form's checks.
    """
    if template.pk is None:
        template.version = 1
    else:
        locked = PromptTemplate.objects.select_for_update().only("version").filter(pk=template.pk).first()
        if locked is None:
            raise NotFound("Prompt template not found.")
        template.version = locked.version + 1
    template.updated_by = user
    try:
        with transaction.atomic():
            template.save()
    except IntegrityError as exc:
        raise Conflict(
            f"A template with the id {template.template_id!r} already exists.",
            details={"template_id": "Already in use."},
        ) from exc
    PromptTemplateVersion.objects.create(
        template=template, version=template.version, snapshot=template.snapshot(), created_by=user
    )
    return template


def template_create(*, tenant: Tenant, data: dict, user=None) -> PromptTemplate:
    """Create the tenant's template from `data` (`template_id` and the editable fields). A
    `template_id` of a built-in is allowed: the new template overrides that built-in for the tenant.
    Without a `follow_up_count`, the template gets RAG_DEFAULT_FOLLOW_UP_COUNT."""
    if tenant is None or tenant.pk is None:
        raise ValueError("a saved tenant is required: built-in templates are edited in the admin only")
    _check_keys(data, allowed=CREATE_FIELDS)
    data = {"follow_up_count": settings.RAG_DEFAULT_FOLLOW_UP_COUNT, **data}
    template = PromptTemplate(tenant=tenant, **data)
    template.full_clean(validate_constraints=False)  # uniqueness: Conflict below, not a ValidationError
    with transaction.atomic():
        if PromptTemplate.objects.filter(tenant=tenant, template_id=template.template_id).exists():
            raise Conflict(
                f"A template with the id {template.template_id!r} already exists.",
                details={"template_id": "Already in use."},
            )
        return template_save(template=template, user=user)


@transaction.atomic
def template_update(*, tenant: Tenant, template_id: str, data: dict, user=None) -> PromptTemplate:
    """Change the fields in `data` (a partial update) of the tenant's template, as a new version.

    For a built-in, the tenant gets its own copy (version 1) with the changes instead; the built-in
    is untouched. `template_id` cannot change (it may be given if equal).
    """
    _check_keys(data, allowed=CREATE_FIELDS)
    if "template_id" in data and data["template_id"] != template_id:
        raise ValidationError({"template_id": "A template's id cannot be changed; create a new template."})
    current = selectors.template_get(tenant=tenant, template_id=template_id)
    if current.is_builtin:
        return template_create(tenant=tenant, data={**current.snapshot(), **data}, user=user)
    template = PromptTemplate.objects.select_for_update().filter(pk=current.pk).first()
    if template is None:  # deleted meanwhile
        raise NotFound("Prompt template not found.")
    for name, value in data.items():
        setattr(template, name, value)
    template.full_clean(validate_constraints=False)
    return template_save(template=template, user=user)


def template_create_or_update(*, tenant: Tenant, data: dict, user=None) -> tuple[PromptTemplate, bool]:
    """The spec's "create or update" by `data["template_id"]`: a new id creates the tenant's
    template, an id the tenant owns gets the changes in `data` as a new version, and a built-in's id
    gives the tenant its overriding copy. Returns the template and whether a row was created."""
    template_id = data.get("template_id")
    try:
        current = selectors.template_get(tenant=tenant, template_id=template_id) if template_id else None
    except NotFound:
        current = None
    if current is None:
        # A missing or malformed id is reported by create's full_clean, field by field.
        return template_create(tenant=tenant, data=data, user=user), True
    template = template_update(tenant=tenant, template_id=template_id, data=data, user=user)
    return template, current.is_builtin


def template_revert(*, tenant: Tenant, template_id: str, version: int, user=None) -> PromptTemplate:
    """Restore the editable fields of an earlier `version` as a new version (history is kept).

    Reverting a built-in's version gives the tenant its own copy, as `template_update` does.
    """
    old = selectors.template_version_get(tenant=tenant, template_id=template_id, version=version)
    data = {name: old.snapshot[name] for name in PromptTemplate.EDITABLE_FIELDS if name in old.snapshot}
    return template_update(tenant=tenant, template_id=template_id, data=data, user=user)


def template_delete(*, tenant: Tenant, template_id: str) -> None:
    """Delete the tenant's own template (and its history). A built-in cannot be deleted."""
    template = selectors.template_get(tenant=tenant, template_id=template_id)
    if template.is_builtin:
        raise PermissionDenied(
            f"{template_id!r} is a built-in template and cannot be deleted. "
            "Create or edit a template with the same id to override it for your firm."
        )
    template.delete()


def _check_keys(data: dict, *, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValidationError({name: "Unknown or read-only field." for name in unknown})
