"""Staff UI pages. Each resolves the session's tenant once (`tenant_page`), reads through the
tenant-scoped selectors, and leaves writes to the REST API the pages' scripts call (uploads,
deletes, reindexing, questions), except the two plain forms here: new case and tenant switch."""

from __future__ import annotations

from functools import wraps
from urllib.parse import parse_qs, urlencode, urlsplit

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.site import page_after_switch
from rag import access, selectors, services
from rag.ingest import attachments as attachments_split
from rag.ingest import scans
from rag.models import DocType, Sensitivity
from rag.pipeline.config import MAX_REASONING_DEPTH
from rag.queries import selectors as query_selectors
from rag.queries.caller import Caller
from ragsite.exceptions import ApplicationError, NoActiveTenant, NotFound, TenantChoiceRequired
from templates_admin.rendering import CITATION_STYLES, RESPONSE_STYLES, STRICTNESS_LEVELS
from templates_admin.selectors import template_list
from tenants import selectors as tenant_selectors
from tenants import services as tenant_services
from tenants.models import Role

from . import firm_settings, reading


def tenant_page(view):
    """Log in first; then the session's tenant and role are `request.caller` (a Caller). A user
    of no tenant sees a page that says so; one of several who has chosen none, the firm chooser."""

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            credential = tenant_services.session_credential(user=request.user, session=request.session)
        except TenantChoiceRequired:  # several firms, none chosen: ask, never pick one for them
            return redirect(f"{reverse('firms')}?{urlencode({'choose': 1, 'next': request.get_full_path()})}")
        except NoActiveTenant:
            return render(request, "web/no_tenant.html", status=403)
        request.caller = Caller(tenant=credential.tenant, role=credential.role, user_id=request.user.pk)
        return view(request, *args, **kwargs)

    return wrapper


def _context(request, **extra) -> dict:
    caller = request.caller
    return {
        "tenant": caller.tenant,
        "role": caller.role,
        "can_manage": Role.at_least(caller.role, Role.MEMBER),
        "memberships": tenant_selectors.membership_list_for_user(user=request.user),
        **extra,
    }


@require_GET
def home(request):
    return redirect("web:cases")


@tenant_page
@require_http_methods(["GET", "POST"])
def cases(request):
    """The tenant's cases; members create new ones here."""
    error, form = None, {"name": "", "client": "", "description": ""}
    if request.method == "POST":
        form = {key: request.POST.get(key, "").strip() for key in form}
        if not Role.at_least(request.caller.role, Role.MEMBER):
            error = "Only members can create cases."
        else:
            try:
                case = services.case_create(tenant=request.caller.tenant, created_by=request.user, **form)
                return redirect("web:case", case_id=case.pk)
            except ApplicationError as exc:
                error = exc.message
            except ValidationError as exc:  # the model's checks: a blank or too long name, ...
                error = _validation_text(exc)
    q = _lookup_text(request.GET.get("q", ""))
    rows = selectors.case_search(
        tenant=request.caller.tenant, q=q or "", hidden_cases=request.caller.hidden_cases
    )
    if q is None:
        rows = rows.none()
    page = Paginator(rows, 50).get_page(request.GET.get("page"))
    context = _context(request, page=page, error=error, form=form)
    return render(request, "web/cases.html", context, status=400 if error else 200)


@tenant_page
@require_GET
def case(request, case_id: int):
    """A case: its documents, and (for members) the upload zone."""
    tenant = request.caller.tenant
    found = _found(
        lambda: selectors.case_get(tenant=tenant, case_id=case_id, hidden_cases=request.caller.hidden_cases)
    )
    if found is None:
        return _not_found(request)
    documents = selectors.document_list(tenant=tenant, case_id=found.pk)
    context = _context(
        request,
        case=found,
        documents=documents,
        doc_types=DocType.choices,
        sensitivities=Sensitivity.choices,
        max_upload_mb=settings.RAG_MAX_UPLOAD_MB,
    )
    return render(request, "web/case.html", context)


@tenant_page
@require_GET
def document(request, document_id: int):
    """A document's extracted text by page; `?start=&end=` (a citation's character range) marks
    the cited passage and the page opens there."""
    tenant, caller = request.caller.tenant, request.caller
    found = _found(
        lambda: selectors.document_get(
            tenant=tenant, document_id=document_id, hidden_cases=caller.hidden_cases
        )
    )
    if found is None:
        return _not_found(request)
    readable = access.may_read(found, caller.reader)
    views, flagged = [], []
    low_ocr = scans.low_confidence_pages(found.ocr_confidence)
    if readable and found.text:
        chunks = selectors.chunk_list(tenant=tenant, document_id=found.pk)
        starts = reading.page_starts(found, chunks.values_list("page_start", "char_start"))
        views = reading.pages(found.text, starts, _mark(request, len(found.text)))
        views = reading.with_ocr(views, found.ocr_confidence, low_ocr)
        flagged = reading.flagged_passages(chunks.exclude(injection_flags=[]))
    # The e-mail it came attached to (the tenant's own, as its attachments are).
    parent = found.parent_id and _found(
        lambda: selectors.document_get(
            tenant=tenant, document_id=found.parent_id, hidden_cases=caller.hidden_cases
        )
    )
    context = _context(
        request,
        document=found,
        pages=views,
        readable=readable,
        flagged=flagged,
        back_to_answer=_answer_link(request),
        low_ocr=low_ocr.items(),
        parent=parent,
        attachments=selectors.document_attachments(tenant=tenant, document_id=found.pk),
        attachments_state=attachments_split.split_state(found),  # an e-mail's: pending until indexed
    )
    return render(request, "web/document.html", context)


def _answer_link(request) -> str | None:
    """/ask/<id>/ of the answer whose citation opened this page (`?answer=`), when the user may
    open that answer; None otherwise."""
    request_id = _lookup_text(request.GET.get("answer", ""))
    if not request_id:
        return None
    caller = request.caller
    found = _found(
        lambda: query_selectors.answer_get(tenant=caller.tenant, caller=caller, request_id=request_id)
    )
    return reverse("web:answer", args=[found.request_id]) if found else None


# The ask page's citation styles in words; the API's name follows each, for whoever uses the API.
CITATION_STYLE_LABELS = {
    "inline_numbers": "Numbers in the text, [1]",
    "bracketed_ids": "Document numbers in the text, [doc_12]",
    "end_list": "Numbers, with a list of sources at the end",
}


@tenant_page
@require_GET
def ask(request):
    """The question page. `?rerun=<request_id>` fills it with one of the user's earlier questions."""
    tenant, caller = request.caller.tenant, request.caller
    rerun = None
    request_id = _lookup_text(request.GET.get("rerun", ""))
    if request_id != "":
        row = None
        if request_id is not None:
            row = _found(
                lambda: query_selectors.query_history_get(tenant=tenant, caller=caller, request_id=request_id)
            )
        if row is None:
            return _not_found(request)
        rerun = {"query": row.query, "options": row.options or {}}
    return render(request, "web/ask.html", ask_context(request, rerun=rerun))


def ask_context(request, **extra) -> dict:
    """The ask page's context: the form's choices and limits, plus `extra`."""
    tenant = request.caller.tenant
    return _context(
        request,
        cases=selectors.case_list(tenant=tenant, hidden_cases=request.caller.hidden_cases),
        templates=template_list(tenant=tenant),
        doc_types=DocType.choices,
        response_styles=RESPONSE_STYLES,
        citation_styles=[(style, CITATION_STYLE_LABELS.get(style, style)) for style in CITATION_STYLES],
        strictness_levels=STRICTNESS_LEVELS,
        default_top_k=settings.RAG_DEFAULT_TOP_K,
        max_query_length=settings.RAG_MAX_QUERY_LENGTH,
        max_reasoning_depth=MAX_REASONING_DEPTH,
        initial_query=request.GET.get("q", ""),
        **extra,
    )


@tenant_page
@require_GET
def history(request):
    """The user's own questions, newest first, each with a re-run link."""
    text = _lookup_text(request.GET.get("q", ""))
    rows = query_selectors.query_history_list(
        tenant=request.caller.tenant, caller=request.caller, text=text or None
    )
    if text is None:
        rows = rows.none()
    page = Paginator(rows, 25).get_page(request.GET.get("page"))
    return render(request, "web/history.html", _context(request, page=page))


@tenant_page
@require_GET
def settings_page(request):
    """The firm's configuration, read-only, for every member: what the firm's admins have set."""
    context = _context(
        request,
        is_admin=Role.at_least(request.caller.role, Role.ADMIN),
        **firm_settings.firm_settings(tenant=request.caller.tenant),
    )
    return render(request, "web/settings.html", context)


@login_required
@require_POST
def switch_tenant(request):
    """Make another of the user's tenants the session's; back to where they were (same site)."""
    slug = _lookup_text(request.POST.get("tenant", ""))
    if slug is None:
        return _not_found(request)
    try:
        credential = tenant_services.session_tenant_switch(
            user=request.user, session=request.session, slug=slug
        )
    except ApplicationError:
        return _not_found(request)
    target = _lookup_text(request.POST.get("next", "")) or reverse("web:cases")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("web:cases")
    return redirect(_after_switch(target, credential))


# Pages of one object of the tenant: after a switch to another tenant they would be "not found".
_OBJECT_PAGES = {"case", "document"}


def _after_switch(target: str, credential) -> str:
    """Where a tenant switch made from `target` lands: the same page, unless it shows an object
    of the previous tenant: then the cases list (a re-run of an earlier question: a blank ask page).
    The firm admin console decides for its own pages."""
    url = urlsplit(target)
    try:
        match = resolve(url.path)
    except Resolver404:
        return target
    if match.namespace == "manage":
        return page_after_switch(target, match.kwargs, credential)
    if match.namespace != "web":
        return target
    if match.url_name in _OBJECT_PAGES:
        return reverse("web:cases")
    if match.url_name == "ask" and "rerun" in parse_qs(url.query):
        return reverse("web:ask")
    return target


def _lookup_text(value: str) -> str | None:
    """`value` (a search text, an id or slug from the request) for a database lookup, or None when
    it holds a NUL character: PostgreSQL refuses NUL in text (a DataError, so a 500) and no stored
    text contains one, so the caller shows no results or "not found"."""
    return None if "\x00" in value else value


def _validation_text(exc: ValidationError) -> str:
    """The messages of a ValidationError in plain words, each after its field's name."""
    if not hasattr(exc, "error_dict"):
        return " ".join(exc.messages)
    return " ".join(
        f"{field.capitalize()}: {message}" if field != "__all__" else message
        for field, messages in exc.message_dict.items()
        for message in messages
    )


def _found(read):
    try:
        return read()
    except NotFound:
        return None


def _not_found(request):
    return render(request, "web/not_found.html", status=404)


def _mark(request, length: int) -> tuple[int, int] | None:
    try:
        start, end = int(request.GET["start"]), int(request.GET["end"])
    except (KeyError, ValueError):
        return None
    return (start, end) if 0 <= start < end <= length else None
