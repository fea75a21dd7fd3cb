"""Writes for cases and ranking weights. Document writes live in rag.ingest.service."""

from __future__ import annotations

from django.db import transaction

from tenants.models import Tenant
from tenants.selectors import owned_list

from . import selectors
from .models import Case, RankingWeights
from .retrieval.ranking import Weights


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


def ranking_weights_set(
    *,
    tenant: Tenant,
    similarity_weight: float,
    recency_weight: float,
    trust_weight: float,
    updated_by=None,
    normalize: bool = False,
) -> RankingWeights:
    """Give the tenant its own ranking weights (creating or updating its one row).

    Every call increments `version` (also when the values are unchanged), so caches keyed on it
    are invalidated. Bad values raise Django's ValidationError and change nothing. With `normalize`,
    valid values are scaled to sum to 1 before they are stored (their proportions are kept).
    """
    candidate = RankingWeights(
        tenant=tenant,
        similarity_weight=similarity_weight,
        recency_weight=recency_weight,
        trust_weight=trust_weight,
        updated_by=updated_by,
    )
    # Constraints are left out: the one-row-per-tenant check would flag the existing row this call
    # is about to update. get_or_create below keeps the row unique, even against a concurrent call.
    candidate.full_clean(validate_constraints=False)
    values = {name: getattr(candidate, name) for name in RankingWeights.WEIGHT_FIELDS}
    if normalize:
        total = sum(values.values())  # > 0: clean() refused all zeros, the validators negatives
        values = {name: value / total for name, value in values.items()}
    return _ranking_weights_write(tenant=tenant, values=values, updated_by=updated_by)


def ranking_weights_reset(*, tenant: Tenant, updated_by=None) -> RankingWeights | None:
    """Put the tenant back on the RAG_*_WEIGHT settings.

    Without a row nothing changes (the tenant already uses the settings; version stays 0) and None
    is returned. With a row, the row is kept and given the settings' current values with
    version + 1: deleting it would restart the version at 0, and a later set() would then reuse a
    version that caches may still hold results for. The cost: a reset tenant keeps the values the
    settings had at reset time if the settings change later.
    """
    if not owned_list(RankingWeights, tenant=tenant).exists():
        return None
    defaults = Weights.from_settings()
    values = {
        "similarity_weight": defaults.similarity,
        "recency_weight": defaults.recency,
        "trust_weight": defaults.trust,
    }
    return _ranking_weights_write(tenant=tenant, values=values, updated_by=updated_by)


def _ranking_weights_write(*, tenant: Tenant, values: dict, updated_by) -> RankingWeights:
    """Store validated `values` on the tenant's row with version + 1, under a row lock."""
    with transaction.atomic():
        # A first write inserts version 1; a concurrent first write fails its INSERT on the unique
        # constraint, and get_or_create then locks and updates the row the other call created.
        row, created = (
            owned_list(RankingWeights, tenant=tenant)
            .select_for_update()
            .get_or_create(tenant=tenant, defaults={**values, "updated_by": updated_by, "version": 1})
        )
        if not created:
            for name, value in values.items():
                setattr(row, name, value)
            row.updated_by = updated_by
            row.version += 1  # atomic: the row is locked until the transaction ends
            row.save()
    return row
