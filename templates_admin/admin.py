"""Django admin for prompt templates (the only place built-ins are edited), with each template's
version history. Saves go through `services.template_save`, so they are versioned like any write."""

from django.contrib import admin

from . import services
from .models import PromptTemplate, PromptTemplateVersion


class PromptTemplateVersionInline(admin.TabularInline):
    model = PromptTemplateVersion
    extra = 0
    can_delete = False
    ordering = ["-version"]
    fields = ["version", "created_at", "created_by", "snapshot"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


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

    def get_readonly_fields(self, request, obj=None):
        # An existing template keeps its owner and id: its history and any overrides refer to both.
        return [*self.readonly_fields, "tenant", "template_id"] if obj else self.readonly_fields

    def save_model(self, request, obj, form, change):
        # The form has validated obj (fields, placeholders, uniqueness); the service versions it.
        services.template_save(template=obj, user=request.user)
