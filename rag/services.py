"""Writes for cases. Document writes live in rag.ingest.service."""

from __future__ import annotations

from tenants.models import Tenant

from . import selectors
from .models import Case


def case_create(
    *, tenant: Tenant, name: str, client: str = "", description: str = "", created_by=None
) -> Case:
    case = Case(tenant=tenant, name=name, client=client, description=description, created_by=created_by)
    case.full_clean()
    case.save()
    return case


def case_get_or_create(*, tenant: Tenant, name: str, created_by=None) -> Case:
    return selectors.case_find_by_name(tenant=tenant, name=name) or case_create(
        tenant=tenant, name=name, created_by=created_by
    )
