"""The logic of the ranking-tuning and dry-run pages, shared by the operator site (rag.admin, any
tenant) and the firm console (console.tuning and console.simulation, the active tenant only).

Each function takes the tenant explicitly: the caller decides which tenant the page acts for (the
form's choice on the operator site, the session's on the console). The forms are in rag.admin_forms.
"""

from __future__ import annotations

from django.contrib import messages
from django.utils.html import format_html

from ragsite.exceptions import ApplicationError
from tenants.models import Tenant

from . import selectors, services
from .models import RankingWeights
from .pipeline.run import simulate_query
from .retrieval.ranking import Weights
from .retrieval.service import Reader, retrieve_with_each

DEFAULT_PREVIEW_TOP_K = 5


def tune_initial(tenant: Tenant | None) -> dict:
    """The tuning form's initial values: the tenant's current weights (the settings' without one)."""
    weights = selectors.ranking_weights_get(tenant=tenant) if tenant else Weights.from_settings()
    return {
        "top_k": DEFAULT_PREVIEW_TOP_K,
        "similarity_weight": weights.similarity,
        "recency_weight": weights.recency,
        "trust_weight": weights.trust,
    }


def tune_preview(form, *, tenant: Tenant, reader: Reader | None = None) -> dict | None:
    """The ranking of a valid tuning form's sample question under the tenant's current and the
    proposed weights, side by side (`rows`, see `ranking_comparison`). Nothing is stored. A search
    error (e.g. an invalid question) becomes a form error and None."""
    data = form.cleaned_data
    current = selectors.ranking_weights_get(tenant=tenant)
    proposed = data["weights"]
    try:
        before, after = retrieve_with_each(
            tenant=tenant,
            query=data["question"],
            weights=[current, proposed],
            top_k=data["top_k"],
            reader=reader,
        )
    except ApplicationError as exc:  # e.g. InvalidQuery, VectorStoreUnavailable
        form.add_error(None, exc.message)
        return None
    shown = {passage.chunk_id: passage for passage in [*before.passages, *after.passages]}
    return {
        "tenant": tenant,
        "current": current,
        "proposed": proposed,
        "rows": ranking_comparison(before.passages, after.passages),
        # Recency gives these nothing whatever its weight (rag.retrieval.ranking.recency_boost).
        "undated": sum(1 for passage in shown.values() if passage.date is None),
        "passages": len(shown),
    }


def tune_save(model_admin, request, *, tenant: Tenant, data: dict) -> RankingWeights:
    """Store a valid tuning form's weights through the service (validated, normalized on request,
    versioned, `updated_by` the user, as POST /admin/ranking/weights does), log the change in the
    admin history and say so."""
    row = services.ranking_weights_set(
        tenant=tenant,
        updated_by=request.user,
        normalize=data["normalize"],
        **{name: data[name] for name in RankingWeights.WEIGHT_FIELDS},
    )
    model_admin.log_change(request, row, f"Tuned the weights (version {row.version}).")
    model_admin.message_user(
        request,
        format_html(
            "Saved the ranking weights of {}: similarity {}, recency {}, trust {} (version {}).",
            tenant,
            f"{row.similarity_weight:.4g}",
            f"{row.recency_weight:.4g}",
            f"{row.trust_weight:.4g}",
            row.version,
        ),
        messages.SUCCESS,
    )
    return row


def ranking_comparison(before, after) -> list[dict]:
    """Rows pairing the i-th passage under the current weights with the i-th under the proposed
    ones. `change` says where the proposed one was before: "new" (not in the current top), "up",
    "down" (by `steps` places) or "same"."""
    position = {passage.chunk_id: index for index, passage in enumerate(before, start=1)}
    rows = []
    for index in range(1, max(len(before), len(after)) + 1):
        new = after[index - 1] if index <= len(after) else None
        change, steps = None, 0
        if new is not None:
            was = position.get(new.chunk_id)
            steps = abs(was - index) if was else 0
            change = "new" if was is None else "up" if was > index else "down" if was < index else "same"
        rows.append(
            {
                "position": index,
                "before": before[index - 1] if index <= len(before) else None,
                "after": new,
                "change": change,
                "steps": steps,
            }
        )
    return rows


def simulate(form, *, tenant: Tenant, reader: Reader, user_id: int | None) -> dict | None:
    """The dry run of a valid simulation form for the tenant (the same call as POST /admin/simulate,
    audited as a dry run of `user_id`), or None with the pipeline's refusal as form errors."""
    try:
        return simulate_query(
            tenant=tenant,
            question=form.cleaned_data["question"],
            reader=reader,
            user_id=user_id,
            **form.options(),
        )
    except ApplicationError as exc:
        form.add_error(None, exc.message)
        for name, detail in exc.details.items():
            form.add_error(None, f"{name}: {detail}")
        return None


def raised_flags(result: dict | None) -> list[str]:
    """The names of the flags a dry run raised."""
    return [name for name, on in (result or {}).get("flags", {}).items() if on is True]
