"""Prompt templates and their version history.

A `PromptTemplate` with a tenant belongs to that tenant. One with `tenant` NULL is a built-in shared
by every tenant (created by migration 0002): tenants read it but never change it (only the Django
admin edits it); a tenant that "edits" a built-in gets its own copy with the same `template_id`,
which shadows the built-in for that tenant (see `services.template_update`). This is the one
exception to "every tenant-owned model has a non-null tenant": query through `selectors`, which
scope to the tenant's own rows plus the built-ins.

Write through `services` (or the admin, which uses them): every write bumps `version` and records the
new state as a `PromptTemplateVersion`, so the history is complete (version 1 = as created).
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from . import rendering


class ResponseStyle(models.TextChoices):
    TERSE = "terse", "Terse"
    BALANCED = "balanced", "Balanced"
    DETAILED = "detailed", "Detailed"


class CitationStyle(models.TextChoices):
    INLINE_NUMBERS = "inline_numbers", "Inline numbers [1]"
    BRACKETED_IDS = "bracketed_ids", "Bracketed document ids [doc_42]"
    END_LIST = "end_list", "Numbers [1] and a source list at the end"


class Strictness(models.TextChoices):
    LENIENT = "lenient", "Lenient"
    NORMAL = "normal", "Normal"
    STRICT = "strict", "Strict"


class PromptTemplateQuerySet(models.QuerySet):
    def visible_to(self, tenant) -> PromptTemplateQuerySet:
        """The tenant's own templates and the built-ins (overridden ones included; selectors drop
        those). A missing tenant is a programming error, never "built-ins only" or "all rows"."""
        if tenant is None or tenant.pk is None:
            raise ValueError("a saved tenant is required to scope a query")
        return self.filter(Q(tenant=tenant) | Q(tenant__isnull=True))


_PLACEHOLDER_HELP = (
    "Placeholders: " + ", ".join("{" + name + "}" for name in rendering.ALLOWED_PLACEHOLDERS) + ". "
    "Write literal braces as {{ and }}."
)


class PromptTemplate(models.Model):
    # The fields a snapshot records and an update may change (template_id and tenant never change).
    EDITABLE_FIELDS = (
        "name",
        "description",
        "response_style",
        "system_prompt",
        "user_prompt",
        "instructions_block",
        "citation_style",
        "strictness",
        "follow_up_count",
    )

    tenant = models.ForeignKey(
        "tenants.Tenant",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Empty for a built-in template shared by all tenants.",
    )
    template_id = models.SlugField(max_length=100, help_text='e.g. "legal_analysis_balanced"')
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    response_style = models.CharField(
        max_length=16, choices=ResponseStyle.choices, default=ResponseStyle.BALANCED
    )
    system_prompt = models.TextField(help_text=_PLACEHOLDER_HELP)
    user_prompt = models.TextField(
        help_text=_PLACEHOLDER_HELP + " Must contain {context} and {question}; without {instructions} "
        "the instructions are appended at the end."
    )
    instructions_block = models.TextField(
        blank=True,
        help_text="Template-specific instructions, placed before the automatic REQUIREMENTS block. "
        "Plain text: no placeholders, braces are literal.",
    )
    citation_style = models.CharField(
        max_length=16, choices=CitationStyle.choices, default=CitationStyle.INLINE_NUMBERS
    )
    strictness = models.CharField(max_length=16, choices=Strictness.choices, default=Strictness.NORMAL)
    follow_up_count = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(0), MaxValueValidator(rendering.MAX_FOLLOW_UPS)]
    )
    placeholders = models.JSONField(default=list, blank=True, editable=False)
    version = models.PositiveIntegerField(default=1, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = PromptTemplateQuerySet.as_manager()

    class Meta:
        ordering = ["template_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "template_id"], name="prompt_template_unique_tenant_id"
            ),
            models.UniqueConstraint(
                fields=["template_id"],
                condition=Q(tenant__isnull=True),
                name="prompt_template_unique_builtin_id",
                violation_error_message="A built-in template with this id already exists.",
            ),
            models.CheckConstraint(
                condition=Q(follow_up_count__lte=rendering.MAX_FOLLOW_UPS),
                name="prompt_template_follow_up_count_max",
            ),
        ]

    def __str__(self) -> str:
        owner = "built-in" if self.is_builtin else f"tenant {self.tenant_id}"
        return f"{self.template_id} ({owner}, v{self.version})"

    def save(self, *args, **kwargs) -> None:
        self.placeholders = rendering.template_placeholders(
            system_prompt=self.system_prompt or "", user_prompt=self.user_prompt or ""
        )
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and {"system_prompt", "user_prompt"} & set(update_fields):
            kwargs["update_fields"] = {*update_fields, "placeholders"}
        super().save(*args, **kwargs)

    @property
    def is_builtin(self) -> bool:
        return self.tenant_id is None

    def clean(self) -> None:
        errors = rendering.template_errors(system_prompt=self.system_prompt, user_prompt=self.user_prompt)
        if errors:
            raise ValidationError(errors)

    def snapshot(self) -> dict:
        """The editable state, as a version row stores it."""
        return {
            "template_id": self.template_id,
            **{name: getattr(self, name) for name in self.EDITABLE_FIELDS},
        }


class PromptTemplateVersion(models.Model):
    """One state of a template: `snapshot` holds `PromptTemplate.snapshot()` as of `version`."""

    template = models.ForeignKey(PromptTemplate, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    snapshot = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["template", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["template", "version"], name="prompt_template_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.template.template_id} v{self.version}"
