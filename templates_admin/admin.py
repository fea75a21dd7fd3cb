"""Django admin for prompt templates (the only place built-ins are edited), with each template's
version history. Saves go through `services.template_save`, so they are versioned like any write.

The form refuses invalid placeholders (the model's `clean`, i.e. `rendering.template_errors`). Two
read-only views: a diff of a version against the previous one or the current state, and a preview
of the prompt as the pipeline would fill it (saved or as edited, never saving)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from rag.pipeline.preview import SAMPLE_QUESTION

from . import admin_pages, services
from .admin_pages import PromptPreviewForm
from .models import PromptTemplate, PromptTemplateVersion


class PromptTemplateVersionInline(admin.TabularInline):
    model = PromptTemplateVersion
    extra = 0
    can_delete = False
    ordering = ["-version"]
    fields = ["version", "created_at", "created_by", "compare", "snapshot"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="Compare")
    def compare(self, obj):
        return admin_pages.compare_links(obj, site_name=self.admin_site.name)


BUILTIN_CHANGE_WARNING = (
    "This is a built-in template: saving it changes the template for every firm that has not "
    "made its own copy, from their next question on."
)


class PromptTemplateAdminForm(forms.ModelForm):
    """The change form, with the confirmation an edit of a built-in needs (shown for built-ins only)."""

    confirm_builtin_change = forms.BooleanField(
        label="I understand this changes the built-in for every firm",
        required=False,
        help_text=BUILTIN_CHANGE_WARNING,
    )

    class Meta:
        model = PromptTemplate
        # The editable fields (the admin narrows them further: owner and id only on add).
        fields = ["tenant", "template_id", "name", "description", *PromptPreviewForm.Meta.fields]

    def clean(self):
        cleaned = super().clean()
        # A saved built-in answers every tenant without its own copy: no silent edits of it.
        editing_builtin = self.instance.pk is not None and self.instance.is_builtin
        if editing_builtin and not cleaned.get("confirm_builtin_change"):
            self.add_error(
                "confirm_builtin_change",
                "Confirm that this changes the built-in for every firm, or leave without saving.",
            )
        return cleaned


class OwnerFilter(admin.SimpleListFilter):
    title = "owner"
    parameter_name = "owner"

    def lookups(self, request, model_admin):
        return [("builtin", "Built-in"), ("tenant", "Tenant templates")]

    def queryset(self, request, queryset):
        if self.value() == "builtin":
            return queryset.filter(tenant__isnull=True)
        if self.value() == "tenant":
            return queryset.filter(tenant__isnull=False)
        return queryset


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    form = PromptTemplateAdminForm
    list_display = ["template_id", "owner", "response_style", "citation_style", "version", "updated_at"]
    list_filter = [OwnerFilter, "tenant", "response_style", "citation_style", "strictness"]
    list_select_related = ["tenant"]
    search_fields = ["template_id", "name", "description"]
    fields = [
        "tenant",
        "template_id",
        "name",
        "description",
        "response_style",
        "citation_style",
        "strictness",
        "follow_up_count",
        "system_prompt",
        "user_prompt",
        "instructions_block",
        "placeholders",
        "version",
        "created_at",
        "updated_at",
        "updated_by",
    ]
    readonly_fields = ["placeholders", "version", "created_at", "updated_at", "updated_by"]
    inlines = [PromptTemplateVersionInline]

    @admin.display(description="Owner", ordering="tenant__name")
    def owner(self, obj):
        return obj.tenant or "built-in"

    def get_fields(self, request, obj=None):
        # Only an existing built-in's form asks for the confirmation (PromptTemplateAdminForm.clean).
        fields = super().get_fields(request, obj)
        if obj is not None and obj.is_builtin:
            return ["confirm_builtin_change", *fields]
        return [name for name in fields if name != "confirm_builtin_change"]

    def get_readonly_fields(self, request, obj=None):
        # An existing template keeps its owner and id: its history and any overrides refer to both.
        return [*self.readonly_fields, "tenant", "template_id"] if obj else self.readonly_fields

    def save_model(self, request, obj, form, change):
        # The form has validated obj (fields, placeholders, uniqueness); the service versions it.
        services.template_save(template=obj, user=request.user)

    def has_delete_permission(self, request, obj=None):
        # Every tenant without its own copy answers with a built-in: deleting one would break their
        # questions. The REST API refuses it too (services.template_delete).
        if obj is not None and obj.is_builtin:
            return False
        return super().has_delete_permission(request, obj)

    def delete_model(self, request, obj):
        services.template_delete(tenant=obj.tenant, template_id=obj.template_id)

    def delete_queryset(self, request, queryset):
        """The bulk action: tenants' templates are deleted through the service; built-ins never."""
        builtins = sorted(queryset.filter(tenant__isnull=True).values_list("template_id", flat=True))
        for template in queryset.filter(tenant__isnull=False).select_related("tenant"):
            services.template_delete(tenant=template.tenant, template_id=template.template_id)
        if builtins:
            self.message_user(
                request,
                f"Built-in templates cannot be deleted, so these were kept: {', '.join(builtins)}.",
                messages.WARNING,
            )

    def get_urls(self):
        info = f"{self.opts.app_label}_{self.opts.model_name}"
        view = self.admin_site.admin_view
        return [
            path("preview/", view(self.preview_view), name=f"{info}_preview_new"),
            path("<path:object_id>/preview/", view(self.preview_view), name=f"{info}_preview"),
            path("<path:object_id>/diff/", view(self.diff_view), name=f"{info}_diff"),
            *super().get_urls(),
        ]

    def _template_or_404(self, request, object_id) -> PromptTemplate:
        template = self.get_object(request, object_id)  # None for a malformed id too
        if template is None:
            raise Http404("No such prompt template.")
        if not self.has_view_permission(request, template):
            raise PermissionDenied
        return template

    def preview_view(self, request, object_id=None):
        """The prompt as the pipeline would fill it for a sample question and sample passages: of
        the saved template (GET), or of the fields posted, e.g. the change form's unsaved edits
        (POST). Never saves; invalid placeholders are form errors, as on the change form."""
        if object_id is None:
            if not (self.has_add_permission(request) or self.has_view_permission(request)):
                raise PermissionDenied
            template = PromptTemplate()
        else:
            template = self._template_or_404(request, object_id)
        form, preview = admin_pages.preview_state(request, template)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": template if template.pk else None,
            "title": f"Preview {template.template_id}" if template.pk else "Preview a new template",
            "form": form,
            "preview": preview,
        }
        return TemplateResponse(request, "admin/templates_admin/prompttemplate/preview.html", context)

    def diff_view(self, request, object_id):
        """The changes of a version: against the version before it (default) or the template as it is
        now, as a unified or side-by-side diff of each field."""
        template = self._template_or_404(request, object_id)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": template,
            "title": f"Changes of {template.template_id}",
            **admin_pages.diff_context(template, request.GET),
        }
        return TemplateResponse(request, "admin/templates_admin/prompttemplate/diff.html", context)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        info = f"admin:{self.opts.app_label}_{self.opts.model_name}"
        if object_id is None:
            preview_url = reverse(f"{info}_preview_new")
        else:
            preview_url = reverse(f"{info}_preview", args=[object_id])
        extra_context = {
            **(extra_context or {}),
            "preview_url": preview_url,
            "preview_question": SAMPLE_QUESTION,
        }
        return super().changeform_view(request, object_id, form_url, extra_context)
