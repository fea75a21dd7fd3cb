"""The dry-run simulation on the tenant site (/manage/simulate/, in the menu under the audit log's
app): the prompt a question would send, the passages in it with their scores, the estimated tokens,
the model and the flags, without calling the model.

The same call as the operator site's simulation and POST /admin/simulate (rag.admin_pages.simulate),
for the active tenant only (the form has no tenant field), read as the logged-in user with their
role in that tenant (so a passage they may not read is redacted), audited as their dry run.
"""

from __future__ import annotations

from django.template.response import TemplateResponse

from rag import admin_pages
from rag.admin_forms import TenantSimulationForm
from rag.models import AuditLog
from rag.retrieval.service import Reader

from .site import console_credential, site

TITLE = "Simulate a query (dry run)"


def simulate_view(request):
    """GET: the form; POST: the dry run of the question for the active tenant, shown under it."""
    credential = console_credential(request)
    form = TenantSimulationForm(request.POST or None, tenant=credential.tenant)
    result = None
    if request.method == "POST" and form.is_valid():
        result = admin_pages.simulate(
            form,
            tenant=credential.tenant,
            reader=Reader(user_id=request.user.pk, role=credential.role),
            user_id=request.user.pk,
        )
    request.current_app = site.name  # the template's 'admin:' links stay on this site
    context = {
        **site.each_context(request),
        "title": TITLE,
        "form": form,
        "result": result,
        "raised_flags": admin_pages.raised_flags(result),
        "opts": AuditLog._meta,  # the breadcrumbs lead to the audit log
    }
    return TemplateResponse(request, "console/simulate.html", context)


site.register_page(simulate_view, route="simulate/", name="simulate", label=TITLE, app_label="rag")
