"""The model admins of the tenant site: audit log (read-only, CSV), prompt templates (the firm's
own, plus the built-ins read-only with "customise"), and API keys (create shown once, revoke).

Writes go through the same services as the REST API; every admin derives from `TenantScopedAdmin`.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode

from rag.admin import AUDIT_RECORD_FIELDS, audit_csv_response
from rag.models import AuditLog, Case, QueryJob
from rag.pipeline.preview import SAMPLE_QUESTION
from rag.queries.caller import Caller
from rag.queries.withheld import checked_row
from rag.selectors import AUDIT_FLAGS, audit_list, audit_outside_walls, walled_case_ids
from ragsite.exceptions import NotFound
from templates_admin import admin_pages as template_admin_pages
from templates_admin import selectors as template_selectors
from templates_admin import services as template_services
from templates_admin.admin import PromptTemplateVersionInline
from templates_admin.models import PromptTemplate
from tenants import services as tenant_services
from tenants.models import ApiKey, Role
from tenants.selectors import api_key_list, owned_list

from .scoped import PageAnnotatedChangeList, ReadOnlyTenantAdmin, TenantScopedAdmin, asker
from .site import console_credential, site

QUESTION_PREVIEW_LENGTH = 120


def one_line(text: str) -> str:
    """`text` on one line, cut to QUESTION_PREVIEW_LENGTH characters."""
    text = " ".join(text.split())
    return text if len(text) <= QUESTION_PREVIEW_LENGTH else text[: QUESTION_PREVIEW_LENGTH - 1] + "…"


def console_caller(request) -> Caller:
    """The console's user as the staff UI and the API see them: their role decides the
    confidential text they may read, the walls they are not on hide cases."""
    credential = console_credential(request)
    return Caller(tenant=credential.tenant, role=credential.role, user_id=request.user.pk)


def scoped_case_ids(options: dict | None) -> list[int]:
    """The case ids a question was scoped to (`filters.case_ids`, numbers or numeric strings)."""
    filters = options.get("filters") if isinstance(options, dict) else None
    ids = filters.get("case_ids") if isinstance(filters, dict) else None
    if not isinstance(ids, list):
        return []
    return [int(pk) for pk in ids if isinstance(pk, int) or (isinstance(pk, str) and pk.isdigit())]


def audit_mode(row: AuditLog, job_mode: str | None) -> str:
    """How the question was asked: "sync", "async" (a job), "agentic", "dry run", or what asked on
    the caller's behalf ("review table"). The row keeps the options; a job keeps its mode."""
    options = row.options if isinstance(row.options, dict) else {}
    origin = (row.flags or {}).get("origin")
    if origin:
        return str(origin).replace("_", " ")
    if options.get("dry_run") is True:
        return "dry run"
    if options.get("agentic") is True:  # the API's mode "agentic" (or an async job run agentically)
        return "agentic" if job_mode in (None, "sync") else f"{job_mode}, agentic"
    return job_mode or "sync"


# --- Audit log --------------------------------------------------------------------------------


@admin.register(AuditLog, site=site)
class ConsoleAuditLogAdmin(ReadOnlyTenantAdmin):
    """The firm's question log: read-only (rows are append-only), filterable, exportable as CSV."""

    change_list_template = "console/auditlog/change_list.html"
    list_display = [
        "created_at",
        "caller",
        "status",
        "mode",
        "case",
        "question",
        "template_id",
        "confidence",
        "raised_flags",
    ]
    list_display_links = ["created_at", "question"]
    list_filter = ["status", "created_at", "template_id", "cache_hit"]
    date_hierarchy = "created_at"
    search_fields = ["=request_id", "query"]
    search_help_text = "An exact request id, or words of the question."
    actions = ["export_selected_csv"]
    # The answer and its citations follow the question; the record's other fields after them.
    fields = [
        "created_at",
        "mode",
        "case",
        *AUDIT_RECORD_FIELDS[: AUDIT_RECORD_FIELDS.index("search_query") + 1],
        "answer",
        "citations",
        *AUDIT_RECORD_FIELDS[AUDIT_RECORD_FIELDS.index("search_query") + 1 :],
        "flags",
    ]
    readonly_fields = fields

    def tenant_queryset(self, request):
        tenant = self.active_tenant(request)  # rows about cases walled off from the admin are left out
        return (
            audit_outside_walls(
                audit_list(tenant=tenant), walled_case_ids(tenant=tenant, user_id=request.user.pk)
            )
            .select_related("user")
            .defer("result")
        )

    def get_changelist(self, request, **kwargs):
        return PageAnnotatedChangeList

    def annotate_page(self, request, rows: list[AuditLog]) -> None:
        """Each row's job mode (async jobs keep it) and the names of the cases it was scoped to."""
        tenant = self.active_tenant(request)
        jobs = dict(
            owned_list(QueryJob, tenant=tenant)
            .filter(request_id__in=[row.request_id for row in rows])
            .values_list("request_id", "mode")
        )
        names = self._case_names(request, {pk for row in rows for pk in scoped_case_ids(row.options)})
        for row in rows:
            row.job_mode = jobs.get(row.request_id)
            row.case_names = [names[pk] for pk in scoped_case_ids(row.options) if pk in names]

    def _case_names(self, request, ids) -> dict[int, str]:
        tenant = self.active_tenant(request)
        cases = owned_list(Case, tenant=tenant).filter(pk__in=ids)
        # A row scoped to a walled case is not listed at all; this keeps the names out regardless.
        cases = cases.exclude(pk__in=walled_case_ids(tenant=tenant, user_id=request.user.pk))
        return dict(cases.values_list("pk", "name"))

    def get_object(self, request, object_id, from_field=None):
        """The row as its reader may see it now (rag.queries.withheld, as the staff UI's answer
        page and the API): about a walled case, not found; drawing on a confidential document the
        reader may not read, its answer and citations withheld."""
        row = super().get_object(request, object_id, from_field)
        try:
            row = checked_row(console_caller(request), row)
        except NotFound:
            raise Http404("No audit log with this id.") from None
        self.annotate_page(request, [row])
        return row

    @admin.display(description="Caller")
    def caller(self, obj):
        return asker(obj)

    @admin.display(description="Mode")
    def mode(self, obj):
        return audit_mode(obj, getattr(obj, "job_mode", None))

    @admin.display(description="Case")
    def case(self, obj):
        return ", ".join(getattr(obj, "case_names", ())) or "-"

    @admin.display(description="Question")
    def question(self, obj):
        """The question cut to one line's worth; the detail page has it in full."""
        return one_line(obj.query)

    @admin.display(description="Answer")
    def answer(self, obj):
        result = obj.result if isinstance(obj.result, dict) else {}
        text = result.get("answer") or result.get("message")
        if not text:
            return "-"
        return format_html('<p class="audit-answer">{}</p>', text)

    @admin.display(description="Citations")
    def citations(self, obj):
        """Each cited passage: its number, title, pages and the quoted snippet."""
        result = obj.result if isinstance(obj.result, dict) else {}
        cited = [item for item in result.get("citations") or () if isinstance(item, dict)]
        if not cited:
            return "-"
        items = format_html_join(
            "",
            '<li value="{}"><strong>{}</strong>, {}<span class="citation-snippet">{}</span></li>',
            (
                (
                    _citation_number(item),
                    item.get("title") or "-",
                    _pages(item.get("page"), item.get("page_end")),
                    item.get("snippet") or "",
                )
                for item in cited
            ),
        )
        return format_html('<ol class="audit-citations">{}</ol>', items)

    @admin.display(description="Flags")
    def raised_flags(self, obj):
        raised = [name for name in AUDIT_FLAGS if name != "cache_hit" and obj.flags.get(name)]
        return ", ".join(raised) or "-"

    @admin.action(description="Export selected as CSV", permissions=["view"])
    def export_selected_csv(self, request, queryset):
        return audit_csv_response(queryset)

    def get_urls(self):
        info = f"{self.opts.app_label}_{self.opts.model_name}"
        export = path("export/", self.admin_site.admin_view(self.export_view), name=f"{info}_export")
        return [export, *super().get_urls()]

    def export_view(self, request):
        """The rows the change list shows for the same query string (filters, search, date), as CSV."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return HttpResponseRedirect(reverse("manage:rag_auditlog_changelist") + "?e=1")
        return audit_csv_response(changelist.queryset)


def _citation_number(item: dict) -> str:
    number = str(item.get("citation_id") or "")
    return number if number.isdigit() else ""


def _pages(start, end) -> str:
    if start is None:
        return "page unknown"
    return f"p. {start}" if end in (None, start) else f"pp. {start}-{end}"


# --- Prompt templates ---------------------------------------------------------------------------


class TemplateVersionInline(PromptTemplateVersionInline):
    """A template's history, read-only, as on the operator site (the parent is already scoped to
    the tenant); viewable by the firm's admins, who hold no Django model permissions."""

    def has_view_permission(self, request, obj=None):
        return self.admin_site.has_permission(request)


class OwnTemplateForm(forms.ModelForm):
    """The form of the firm's own template; `tenant` is set by the admin before validation."""

    def clean_template_id(self):
        template_id = self.cleaned_data["template_id"]
        own = PromptTemplate.objects.filter(tenant=self.instance.tenant, template_id=template_id)
        if self.instance.pk is None and own.exists():
            raise forms.ValidationError("Your firm already has a template with this id.")
        return template_id


@admin.register(PromptTemplate, site=site)
class ConsolePromptTemplateAdmin(TenantScopedAdmin):
    """The firm's templates with full CRUD (versioned by `template_save`), and the built-ins it has
    not overridden, read-only: "customise" gives the firm its own copy, never edits the built-in.

    Each template's history has a diff of a version (against the previous one or the current state)
    and, for the firm's own templates, a revert to that version (a new version); every template can
    be previewed (the prompt filled for a sample question; never saved). These pages share their
    logic with the operator site (templates_admin.admin_pages) and find the template through the
    scoped queryset: another tenant's template is a 404."""

    form = OwnTemplateForm
    # The operator site's pages, site-agnostic: their 'admin:' links resolve on the current site.
    change_form_template = "admin/templates_admin/prompttemplate/change_form.html"
    list_display = ["template_id", "name", "owner", "response_style", "version", "updated_at"]
    search_fields = ["template_id", "name"]
    actions = ["customise"]
    readonly_fields = ["placeholders", "version", "updated_at"]
    inlines = [TemplateVersionInline]

    def tenant_queryset(self, request):
        return template_selectors.template_list(tenant=self.active_tenant(request))

    @admin.display(description="Owner")
    def owner(self, obj):
        return "built-in" if obj.is_builtin else "your firm"

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change, **kwargs)
        tenant = self.active_tenant(request)

        class TenantForm(form_class):
            def __init__(self, *args, **kw):
                super().__init__(*args, **kw)
                if self.instance.pk is None:
                    self.instance.tenant = tenant  # validation sees the row as the firm's

        return TenantForm

    def get_readonly_fields(self, request, obj=None):
        # An existing template keeps its id: its history and the audit log refer to it.
        return [*self.readonly_fields, "template_id"] if obj else self.readonly_fields

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and not (obj and obj.is_builtin)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and not (obj and obj.is_builtin)

    def save_model(self, request, obj, form, change):
        obj.tenant = self.active_tenant(request)
        template_services.template_save(template=obj, user=request.user)

    def delete_model(self, request, obj):
        template_services.template_delete(tenant=self.active_tenant(request), template_id=obj.template_id)

    def delete_queryset(self, request, queryset):
        """Bulk delete: the firm's own templates only; built-ins are kept, and said so."""
        tenant = self.active_tenant(request)
        for template_id in queryset.filter(tenant=tenant).values_list("template_id", flat=True):
            template_services.template_delete(tenant=tenant, template_id=template_id)
        builtins = sorted(queryset.filter(tenant__isnull=True).values_list("template_id", flat=True))
        if builtins:
            self.message_user(
                request, f"Built-in templates cannot be deleted, so these were kept: {', '.join(builtins)}."
            )

    @admin.action(description="Customise: make the firm's own copy of selected built-ins")
    def customise(self, request, queryset):
        tenant = self.active_tenant(request)
        made = []
        for template in queryset.filter(tenant__isnull=True):
            template_services.template_update(
                tenant=tenant, template_id=template.template_id, data={}, user=request.user
            )
            made.append(template.template_id)
        if made:
            self.message_user(request, f"Your firm now has its own copy of: {', '.join(made)}.")
        else:
            self.message_user(request, "Select built-in templates to customise.", messages.WARNING)

    def get_urls(self):
        info = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view
        return [
            path("<path:object_id>/preview/", view(self.preview_view), name=f"{info}_preview"),
            path("<path:object_id>/diff/", view(self.diff_view), name=f"{info}_diff"),
            path("<path:object_id>/revert/", view(self.revert_view), name=f"{info}_revert"),
            *super().get_urls(),
        ]

    def _template_or_404(self, request, object_id) -> PromptTemplate:
        template = self.get_object(request, object_id)  # scoped: another tenant's id is a 404
        if not self.has_view_permission(request, template):
            raise PermissionDenied
        return template

    def _render(self, request, template_name: str, context: dict):
        request.current_app = self.admin_site.name  # the templates' 'admin:' links stay on this site
        context = {**self.admin_site.each_context(request), "opts": self.opts, **context}
        return TemplateResponse(request, template_name, context)

    def preview_view(self, request, object_id):
        """The prompt as the pipeline would fill it: the saved template (GET) or the fields posted,
        e.g. the change form's unsaved edits (POST). Never saves, so built-ins may be previewed too."""
        template = self._template_or_404(request, object_id)
        form, preview = template_admin_pages.preview_state(request, template)
        title = f"Preview {template.template_id}"
        context = {"original": template, "title": title, "form": form, "preview": preview}
        return self._render(request, "admin/templates_admin/prompttemplate/preview.html", context)

    def diff_view(self, request, object_id):
        """A version's changes against the version before it or the current template; the firm's
        own template offers to revert to the version shown."""
        template = self._template_or_404(request, object_id)
        diff = template_admin_pages.diff_context(template, request.GET)
        chosen = diff["chosen"]
        can_revert = (
            chosen is not None
            and chosen.version != template.version
            and self.has_change_permission(request, template)
        )
        title = f"Changes of {template.template_id}"
        context = {"original": template, "title": title, "can_revert": can_revert, **diff}
        return self._render(request, "console/prompttemplate/diff.html", context)

    def revert_view(self, request, object_id):
        """POST `version`: the firm's own template gets that version's fields back as a new version
        (the history is kept). GET shows that version against the current template, with the button."""
        template = self._template_or_404(request, object_id)
        diff_url = reverse(f"{self.admin_site.name}:templates_admin_prompttemplate_diff", args=[template.pk])
        version = request.POST.get("version") if request.method == "POST" else request.GET.get("version")
        if request.method != "POST":
            return redirect(f"{diff_url}?{urlencode({'version': version or '', 'against': 'current'})}")
        if not self.has_change_permission(request, template):
            raise PermissionDenied  # a built-in: customise it first
        try:
            reverted = template_services.template_revert(
                tenant=self.active_tenant(request),
                template_id=template.template_id,
                version=int(version),
                user=request.user,
            )
        except (TypeError, ValueError, NotFound):
            self.message_user(request, f"{template.template_id} has no version {version!r}.", messages.ERROR)
            return redirect(diff_url)
        except ValidationError as exc:  # an old version no longer valid (e.g. a placeholder since removed)
            self.message_user(request, f"Version {version} cannot be restored: {exc}", messages.ERROR)
            return redirect(diff_url)
        self.log_change(request, reverted, f"Reverted to version {version} (now version {reverted.version}).")
        self.message_user(
            request,
            f"{template.template_id} is back to version {version}, saved as version {reverted.version}.",
            messages.SUCCESS,
        )
        return redirect(f"{self.admin_site.name}:templates_admin_prompttemplate_change", template.pk)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if object_id is not None:
            url = reverse(f"{self.admin_site.name}:templates_admin_prompttemplate_preview", args=[object_id])
            extra_context = {**(extra_context or {}), "preview_url": url, "preview_question": SAMPLE_QUESTION}
        return super().changeform_view(request, object_id, form_url, extra_context)


# --- API keys -----------------------------------------------------------------------------------


class ApiKeyForm(forms.ModelForm):
    # As the REST API: a key can be at most admin (an owner is a person).
    role = forms.ChoiceField(choices=[(r, Role(r).label) for r in (Role.VIEWER, Role.MEMBER, Role.ADMIN)])

    class Meta:
        model = ApiKey
        fields = ["name", "role"]


@admin.register(ApiKey, site=site)
class ConsoleApiKeyAdmin(TenantScopedAdmin):
    """The firm's API keys: create (the full key is shown once) and revoke; keys are never edited."""

    form = ApiKeyForm
    list_display = ["name", "masked", "role", "created_at", "last_used_at", "revoked_at"]
    search_fields = ["name", "prefix"]
    actions = ["revoke"]
    readonly_fields = [
        "masked",
        "created_by",
        "created_by_key",
        "created_via",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]

    def tenant_queryset(self, request):
        return api_key_list(tenant=self.active_tenant(request)).select_related("created_by", "created_by_key")

    def get_fields(self, request, obj=None):
        return ["name", "role"] if obj is None else ["name", "role", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["name", "role", *self.readonly_fields]

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # revoke instead: the audit log names keys by prefix

    @admin.display(description="Key")
    def masked(self, obj):
        return f"lx_{obj.prefix}_…"

    def save_model(self, request, obj, form, change):
        # The console is for admins and owners, and a key is at most admin: never above its maker.
        api_key, raw_key = tenant_services.api_key_create(
            tenant=self.active_tenant(request),
            name=obj.name,
            role=obj.role,
            created_by=request.user,
            created_via="console",
        )
        obj.pk, obj.prefix, obj.tenant = api_key.pk, api_key.prefix, api_key.tenant
        messages.warning(request, f"Copy this key now; it will not be shown again: {raw_key}")

    @admin.action(description="Revoke selected keys", permissions=["view"])
    def revoke(self, request, queryset):
        tenant = self.active_tenant(request)
        for key_id in queryset.filter(revoked_at__isnull=True).values_list("pk", flat=True):
            tenant_services.api_key_revoke(tenant=tenant, key_id=key_id)
        self.message_user(request, "Revoked the selected keys.")
