"""The staff UI's review tables: a case's "Review" page (pick columns, or a saved column set, and
start a table; the case's tables) and a table's page (progress while it fills, then documents down
the side, columns across, each cell the answer, its quote, a link to the passage and a confidence).
Reads go through the review tables' selectors, which show each reader only what they may read now;
starting, re-running and cancelling go through the REST API from the page's script."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from rag import selectors
from rag.review.columns import COLUMNS, PRESENCE
from rag.review.tables import selectors as table_selectors
from rag.review.tables.models import ACTIVE

from .views import _context, _found, _not_found, tenant_page


@tenant_page
@require_GET
def review(request, case_id: int):
    caller = request.caller
    case = _found(
        lambda: selectors.case_get(tenant=caller.tenant, case_id=case_id, hidden_cases=caller.hidden_cases)
    )
    if case is None:
        return _not_found(request)
    templates = table_selectors.review_template_list(tenant=caller.tenant)
    context = _context(
        request,
        case=case,
        presence_columns=[column for column in COLUMNS if column.kind == PRESENCE],
        value_columns=[column for column in COLUMNS if column.kind != PRESENCE],
        templates=templates,
        template_columns={str(template.pk): template.columns for template in templates},
        tables=table_selectors.review_table_list(tenant=caller.tenant, case_id=case.pk),
        is_admin=caller.is_admin,
    )
    return render(request, "web/review.html", context)


@tenant_page
@require_GET
def review_table(request, table_id: int):
    caller = request.caller
    table = _found(
        lambda: table_selectors.review_table_get(
            tenant=caller.tenant, table_id=table_id, hidden_cases=caller.hidden_cases
        )
    )
    if table is None:
        return _not_found(request)
    view = table_selectors.review_table_view(caller=caller, table=table)
    context = _context(request, table=table, view=view, active=table.status in ACTIVE)
    return render(request, "web/review_table.html", context)
