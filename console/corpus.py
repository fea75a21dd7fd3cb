"""The firm's cases and documents on the tenant site: status, progress and errors at a glance,
reindex, delete, and the metadata edits the REST API allows.

Every write goes through the services the REST API calls (`rag.services` for cases,
`rag.ingest.service` and `rag.ingest.edit` for documents), so the index version is bumped, the
passages follow and stored files are deleted exactly as they are there. Documents are never added
here: uploads happen in the staff UI (the change list links to it). The text of a document is
never shown, so confidential documents follow the API's rule: every member sees their metadata,
and admins and owners (the only users of this site) may read and reclassify them.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from rag import selectors
from rag import services as case_services
from rag.ingest import edit
from rag.ingest import service as ingest
from rag.models import Case, Document, DocumentStatus
from ragsite.exceptions import TooManyIngestJobs

from .scoped import TenantScopedAdmin
from .site import site

ERROR_PREVIEW_LENGTH = 90


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class ActiveTenantForms:
    """Mixin of the model admins below: their forms see the active tenant on the instance, so
    their checks (a taken case name, a duplicate file) look in the active firm only."""

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change, **kwargs)
        tenant = self.active_tenant(request)

        class ActiveTenantForm(form_class):
            def __init__(self, *args, **kw):
                super().__init__(*args, **kw)
                self.instance.tenant = tenant

        return ActiveTenantForm


# --- Cases --------------------------------------------------------------------------------------


class CaseForm(forms.ModelForm):
    """Name, client, description and the ethical wall; a name the firm already uses (among the
    cases everyone sees) is a form error (the service would answer it with a Conflict)."""

    class Meta:
        model = Case
        fields = ["name", "client", "description", "walled", "wall_members"]
        help_texts = {
            "walled": "Behind an ethical wall: only the members chosen below see the case, its "
            "documents, answers and exports. Everyone else in the firm, admins included, does not.",
            "wall_members": "Who is on the wall (members of the firm).",
        }

    def clean(self):
        cleaned = super().clean()
        name, walled = cleaned.get("name"), cleaned.get("walled")
        holder = (
            None
            if walled or not name
            else selectors.case_find_by_name(tenant=self.instance.tenant, name=name)
        )
        if holder is not None and holder.pk != self.instance.pk:
            self.add_error("name", "Your firm already has a case with this name.")
        return cleaned


@admin.register(Case, site=site)
class ConsoleCaseAdmin(ActiveTenantForms, TenantScopedAdmin):
    """The firm's cases: add and change through `case_create`/`case_update`, delete through
    `case_delete` (with every document, passage and stored file), and "reindex"."""

    form = CaseForm
    list_display = ["name", "client_shown", "documents", "wall", "created_at"]
    list_filter = ["walled"]
    search_fields = ["name", "client"]
    search_help_text = "Words of the case's name or client."
    actions = ["reindex"]
    readonly_fields = ["documents", "created_by", "created_at", "updated_at"]

    def tenant_queryset(self, request):
        # Every case, walled ones included: the firm's admins manage the walls here. What is behind
        # a wall they are not on (its documents, answers, exports) stays hidden from them.
        return selectors.case_search(tenant=self.active_tenant(request)).select_related("created_by")

    def _hidden(self, request) -> frozenset[int]:
        return selectors.walled_case_ids(tenant=self.active_tenant(request), user_id=request.user.pk)

    @admin.display(description="Client", ordering="client")
    def client_shown(self, obj):
        return "-" if obj.walled else obj.client  # what a walled matter is about stays behind the wall

    def get_fields(self, request, obj=None):
        # A case walled off from the admin: its name and its wall, to manage it; nothing it is about.
        if obj is not None and obj.pk in self._hidden(request):
            return ["name", "walled", "wall_members"]
        return super().get_fields(request, obj)

    @admin.display(description="Ethical wall", ordering="walled")
    def wall(self, obj):
        if not obj.walled:
            return "-"
        return f"Walled: {_plural(obj.wall_members.count(), 'member')}"

    @admin.display(description="Documents", ordering="document_count")
    def documents(self, obj):
        """How many documents the case holds, linked to their list (not for a walled case: the list
        does not show it to whoever is not on the wall)."""
        count = getattr(obj, "document_count", None)
        if count is None or obj.walled:
            return "-"
        url = reverse("manage:rag_document_changelist") + f"?case__id__exact={obj.pk}"
        return format_html('<a href="{}">{}</a>', url, count)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "wall_members":  # the firm's members only
            kwargs["queryset"] = (
                get_user_model().objects.filter(memberships__tenant=self.active_tenant(request)).distinct()
            )
            kwargs["widget"] = forms.CheckboxSelectMultiple
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        tenant = self.active_tenant(request)
        fields = case_services.CASE_UPDATABLE_FIELDS
        values = {name: form.cleaned_data[name] for name in fields if name in form.cleaned_data}
        if change:
            saved = case_services.case_update(tenant=tenant, case_id=obj.pk, data=values)
        else:
            saved = case_services.case_create(tenant=tenant, created_by=request.user, **values)
        walled, members = form.cleaned_data.get("walled", False), form.cleaned_data.get("wall_members", [])
        if {"walled", "wall_members"} & set(form.changed_data):
            case_services.case_wall_set(tenant=tenant, case_id=saved.pk, walled=walled, members=members)
        obj.pk, obj.tenant, obj.created_at = saved.pk, saved.tenant, saved.created_at

    def save_related(self, request, form, formsets, change):
        pass  # the wall's members are set by case_wall_set (save_model), checked to be the firm's

    def has_delete_permission(self, request, obj=None):
        # A case walled off from the admin is not deleted by them (they cannot see what it holds).
        hidden = obj is not None and obj.pk in self._hidden(request)
        return not hidden and super().has_delete_permission(request, obj)

    def delete_model(self, request, obj):
        case_services.case_delete(tenant=self.active_tenant(request), case_id=obj.pk)

    def delete_queryset(self, request, queryset):
        tenant = self.active_tenant(request)
        hidden = self._hidden(request)
        for case_id in queryset.exclude(pk__in=sorted(hidden)).values_list("pk", flat=True):
            case_services.case_delete(tenant=tenant, case_id=case_id)

    def get_deleted_objects(self, objs, request):
        """What the confirmation page lists: each case with how many documents go with it (not
        every passage, which Django would list one by one)."""
        cases = [objs] if isinstance(objs, Case) else list(objs)
        tenant = self.active_tenant(request)
        counts = dict(
            selectors.document_list(tenant=tenant)
            .filter(case__in=cases)
            .order_by()
            .values_list("case_id")
            .annotate(n=Count("pk"))
        )
        to_delete = [
            f"{case}: with {_plural(counts.get(case.pk, 0), 'document')}, their passages and stored files"
            for case in cases
        ]
        model_count = {"cases": len(cases), "documents": sum(counts.values())}
        return to_delete, model_count, set(), []

    @admin.action(description="Reindex every document of the selected cases", permissions=["change"])
    def reindex(self, request, queryset):
        tenant = self.active_tenant(request)
        queued = 0
        for case in queryset.exclude(pk__in=sorted(self._hidden(request))):  # checked per case
            try:
                queued += ingest.case_reindex(tenant=tenant, case_id=case.pk)
            except TooManyIngestJobs as exc:
                self.message_user(request, f"{case}: {exc.message}", level=messages.WARNING)
        self.message_user(request, f"Queued {_plural(queued, 'document')} for reindexing.")


# --- Documents ----------------------------------------------------------------------------------


# A document's description, which search filters on (copied onto its passages, except metadata).
DESCRIPTION_FIELDS = ["source_type", "doc_type", "jurisdiction", "document_date", "sensitivity", "metadata"]


# Shown read-only: set by the upload and by ingestion.
FILE_AND_INDEX_FIELDS = [
    "original_filename",
    "title_source",
    "mime_type",
    "size_bytes",
    "sha256",
    "page_count",
    "passages",
    "embedding_model",
    "indexed_at",
    "confidential_readers",
    "parent",
    "uploaded_by",
    "created_at",
    "updated_at",
]


class DocumentForm(forms.ModelForm):
    """The fields `document_update` changes; moving to a case that already holds the same file is a
    form error (the service would answer it with a Conflict)."""

    class Meta:
        model = Document
        fields = ["title", "case", *DESCRIPTION_FIELDS]

    def clean_case(self):
        case = self.cleaned_data["case"]
        if case.walled and not case.wall_members.filter(pk=self.instance._changed_by).exists():
            raise forms.ValidationError("No such case.")  # walled off from this admin
        duplicate = selectors.document_find_duplicate(
            tenant=self.instance.tenant, case=case, sha256=self.instance.sha256
        )
        if duplicate is not None and duplicate.pk != self.instance.pk:
            raise forms.ValidationError(f'That case already holds this file (as "{duplicate.title}").')
        return case


class ProblemFilter(admin.SimpleListFilter):
    """Documents that need attention: failed, or still waiting to be indexed."""

    title = "needs attention"
    parameter_name = "attention"
    CHOICES = {
        "failed": ("Failed", [DocumentStatus.FAILED]),
        "pending": ("Queued or processing", [DocumentStatus.QUEUED, DocumentStatus.PROCESSING]),
    }

    def lookups(self, request, model_admin):
        return [(value, label) for value, (label, _) in self.CHOICES.items()]

    def queryset(self, request, queryset):
        if self.value() in self.CHOICES:
            return queryset.filter(status__in=self.CHOICES[self.value()][1])
        return queryset


@admin.register(Document, site=site)
class ConsoleDocumentAdmin(ActiveTenantForms, TenantScopedAdmin):
    """The firm's documents: ingestion state and errors in the list, "reindex", delete through
    `document_delete`, metadata edits through `document_update`; everything else read-only."""

    form = DocumentForm
    change_list_template = "console/document/change_list.html"
    list_display = [
        "title",
        "case",
        "state",
        "error_summary",
        "page_count",
        "passages",
        "sensitivity",
        "uploaded_by",
        "created_at",
    ]
    list_filter = [
        ProblemFilter,
        "status",
        ("case", admin.RelatedOnlyFieldListFilter),  # the firm's cases only, not every tenant's
        "doc_type",
        "sensitivity",
    ]
    search_fields = ["title", "original_filename"]
    search_help_text = "Words of the title or file name."
    autocomplete_fields = ["case"]
    actions = ["reindex"]
    readonly_fields = ["state", "error", *FILE_AND_INDEX_FIELDS]
    fieldsets = [
        (None, {"fields": ["title", "case", "state", "error"]}),
        ("Description (search filters on these)", {"fields": DESCRIPTION_FIELDS}),
        ("File and index", {"fields": FILE_AND_INDEX_FIELDS}),
    ]

    def tenant_queryset(self, request):
        # Not the documents of cases walled off from the admin: to them those do not exist.
        tenant = self.active_tenant(request)
        hidden = selectors.walled_case_ids(tenant=tenant, user_id=request.user.pk)
        return selectors.document_list(tenant=tenant, hidden_cases=hidden)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change, **kwargs)

        class ChangedByForm(form_class):
            def __init__(self, *args, **kw):
                super().__init__(*args, **kw)
                self.instance._changed_by = request.user.pk  # clean_case: the admin's walls

        return ChangedByForm

    def has_add_permission(self, request):
        return False  # uploads happen in the staff UI (stored, hashed, then ingested)

    @admin.display(description="Status", ordering="status")
    def state(self, obj):
        """The status, with the stage and progress while it is being indexed."""
        if obj.status in (DocumentStatus.QUEUED, DocumentStatus.PROCESSING):
            stage = f" — {obj.stage}" if obj.stage and obj.stage != obj.status else ""
            return f"{obj.get_status_display()}{stage} ({obj.progress}%)"
        return obj.get_status_display()

    @admin.display(description="Error")
    def error(self, obj):
        """Why ingestion failed, as "type: message", or "-"."""
        return ": ".join(part for part in (obj.error_type, obj.error_message) if part) or "-"

    @admin.display(description="Error")
    def error_summary(self, obj):
        """`error`, cut to one line's worth for the list (the document's page has it in full)."""
        return Truncator(self.error(obj)).chars(ERROR_PREVIEW_LENGTH)

    @admin.display(description="Passages", ordering="chunk_count")
    def passages(self, obj):
        return obj.chunk_count

    def save_model(self, request, obj, form, change):
        # Only the changed fields: an unchanged JSON field or date is not a change for the service.
        data = {}
        for name in form.changed_data:
            field = "case_id" if name == "case" else name
            if field in edit.DOCUMENT_UPDATABLE_FIELDS:
                data[field] = getattr(obj, field)
        # The site's users are admins and owners: they read, and may reclassify, every document.
        saved = edit.document_update(
            tenant=self.active_tenant(request), document_id=obj.pk, data=data, reads_all_confidential=True
        )
        obj.title_source, obj.updated_at = saved.title_source, saved.updated_at

    def save_related(self, request, form, formsets, change):
        pass  # the form has no many-to-many field: confidential readers are shown, not edited

    def delete_model(self, request, obj):
        ingest.document_delete(tenant=self.active_tenant(request), document_id=obj.pk)

    def delete_queryset(self, request, queryset):
        tenant = self.active_tenant(request)
        for document_id in queryset.values_list("pk", flat=True):
            ingest.document_delete(tenant=tenant, document_id=document_id)

    def get_deleted_objects(self, objs, request):
        """The confirmation lists the documents with their passage counts, not every passage."""
        documents = [objs] if isinstance(objs, Document) else list(objs)
        to_delete = [
            f"{document}: with {_plural(document.chunk_count, 'passage')} and its stored file"
            for document in documents
        ]
        return to_delete, {"documents": len(documents)}, set(), []

    @admin.action(description="Reindex selected documents", permissions=["change"])
    def reindex(self, request, queryset):
        tenant = self.active_tenant(request)
        queued = 0
        for document in queryset:  # a full ingest queue refuses one, said so; the rest are still tried
            try:
                ingest.document_reindex(tenant=tenant, document_id=document.pk)
            except TooManyIngestJobs as exc:
                self.message_user(request, f"{document}: {exc.message}", level=messages.WARNING)
            else:
                queued += 1
        self.message_user(request, f"Queued {_plural(queued, 'document')} for reindexing.")

    def changelist_view(self, request, extra_context=None):
        """The change list, with a link to the staff UI's upload page (the case's, when the list
        is filtered on one case)."""
        case_id = request.GET.get("case__id__exact", "")
        upload_url = reverse("web:cases")
        own_cases = selectors.case_list(tenant=self.active_tenant(request))
        if case_id.isdigit() and own_cases.filter(pk=case_id).exists():
            upload_url = reverse("web:case", args=[int(case_id)])
        return super().changelist_view(request, {**(extra_context or {}), "upload_url": upload_url})
