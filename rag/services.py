"""Writes for cases and ranking weights. Document writes live in rag.ingest.service."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from ragsite.exceptions import Conflict, InvalidInput
from tenants import selectors as tenant_selectors
from tenants.models import Tenant
from tenants.selectors import owned_list

from . import selectors
from .ingest.service import bump_index_version, corpus_remove
from .models import Case, RankingWeights
from .retrieval.ranking import Weights

CASE_UPDATABLE_FIELDS = ("name", "client", "description")


def _name_taken(name: str) -> Conflict:
    return Conflict(
        f'A case named "{name}" already exists.', details={"name": ["A case with this name already exists."]}
    )


def _case_save(case: Case) -> Case:
    """Validate and save; a name the tenant already uses is a Conflict (409), not a bad input (400)."""
    # The model's one constraint, the unique name, is checked below to answer with Conflict.
    case.full_clean(validate_constraints=False)
    # Names are unique among the cases everyone sees; a walled case's may repeat one (`case_wall_set`).
    holder = None if case.walled else selectors.case_find_by_name(tenant=case.tenant, name=case.name)
    if holder is not None and holder.pk != case.pk:
        raise _name_taken(case.name)
    try:
        with transaction.atomic():
            case.save()
    except IntegrityError as exc:  # a concurrent request took the name after the check
        raise _name_taken(case.name) from exc
    return case


def case_create(
    *, tenant: Tenant, name: str, client: str = "", description: str = "", created_by=None
) -> Case:
    """A new case; a name the tenant already uses raises Conflict."""
    case = Case(tenant=tenant, name=name, client=client, description=description, created_by=created_by)
    return _case_save(case)


def case_update(*, tenant: Tenant, case_id, data: dict) -> Case:
    """Change a case's name, client or description (only the keys present in `data`)."""
    unknown = set(data) - set(CASE_UPDATABLE_FIELDS)
    if unknown:
        raise ValueError(f"not updatable: {sorted(unknown)}")
    case = selectors.case_get(tenant=tenant, case_id=case_id)
    for field, value in data.items():
        setattr(case, field, value)
    return _case_save(case)


def case_delete(*, tenant: Tenant, case_id) -> None:
    """Delete a case with its documents and their chunks; the index version is bumped in the same
    transaction and the stored files are deleted once it commits."""
    with transaction.atomic():
        # Locked: a document being added to the case concurrently (its insert needs a share lock on
        # the case row) waits, so no document escapes the list of files deleted below.
        case = selectors.case_get_for_update(tenant=tenant, case_id=case_id)
        documents = selectors.document_list(tenant=tenant, case_id=case.pk)
        corpus_remove(tenant=tenant, obj=case, file_names=documents.values_list("file", flat=True))


def case_wall_set(*, tenant: Tenant, case_id, walled: bool, members) -> Case:
    """Put a case behind an ethical wall with `members` (users of the tenant) on it, change who is
    on it, or take the wall down (`walled` False; the members are kept for a wall put back up).
    Everyone not on a wall, admins included, no longer sees the case, its documents, answers or
    exports. Raises `InvalidInput` for a member who is not the tenant's and `Conflict` when taking
    the wall down would give two visible cases the same name."""
    members = list(members)
    outsiders = [
        user for user in members if not tenant_selectors.membership_role_of(tenant=tenant, user=user)
    ]
    if outsiders:
        raise InvalidInput(
            "Only members of the firm can be on a wall.",
            details={"wall_members": [f"{user} is not a member of this firm." for user in outsiders]},
        )
    with transaction.atomic():
        case = selectors.case_get_for_update(tenant=tenant, case_id=case_id)
        case.walled = walled
        _case_save(case)
        case.wall_members.set(members)
        # Walls change what answers may hold: cached answers are keyed by what the reader sees, and
        # the index version moves on too, so nothing cached under the old wall is served.
        bump_index_version(tenant=tenant)
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
    weights = ranking_weights_clean(
        tenant=tenant,
        similarity_weight=similarity_weight,
        recency_weight=recency_weight,
        trust_weight=trust_weight,
        normalize=normalize,
    )
    values = {
        "similarity_weight": weights.similarity,
        "recency_weight": weights.recency,
        "trust_weight": weights.trust,
    }
    return _ranking_weights_write(tenant=tenant, values=values, updated_by=updated_by)


def ranking_weights_clean(
    *, tenant: Tenant, similarity_weight, recency_weight, trust_weight, normalize: bool = False
) -> Weights:
    """The weights `ranking_weights_set` would store for these values, without storing anything
    (for previews): validated as the model validates them (Django's ValidationError per field),
    scaled to sum to 1 with `normalize`. Numeric strings are converted, as a form's would be."""
    candidate = RankingWeights(
        tenant=tenant,
        similarity_weight=similarity_weight,
        recency_weight=recency_weight,
        trust_weight=trust_weight,
    )
    # Constraints are left out: the one-row-per-tenant check would flag the existing row a set()
    # is about to update. Its get_or_create keeps the row unique, even against a concurrent call.
    candidate.full_clean(validate_constraints=False)
    values = [getattr(candidate, name) for name in RankingWeights.WEIGHT_FIELDS]
    if normalize:
        total = sum(values)  # > 0: clean() refused all zeros, the validators negatives
        values = [value / total for value in values]
    similarity, recency, trust = values
    return Weights(similarity=similarity, recency=recency, trust=trust)


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
