"""The logic of a prompt template's preview and version-diff pages, shared by the operator site
(templates_admin.admin, every tenant) and the firm console (console.admins, the active tenant only).
The caller has already found the template through its own scoped queryset; these functions never
look a template up, so they cannot reach past it."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.urls import reverse
from django.utils.html import format_html

from rag.pipeline.preview import SAMPLE_PASSAGE, SAMPLE_QUESTION, prompt_preview

from . import diffing, selectors
from .models import PromptTemplate, PromptTemplateVersion

# A line holding only this separates sample passages in the preview form.
PASSAGE_SEPARATOR = "---"


class PromptPreviewForm(forms.ModelForm):
    """The prompt fields of a template (validated by the model, placeholders included) and the
    sample question and passages to fill it with."""

    preview_question = forms.CharField(
        label="Sample question",
        required=False,
        max_length=settings.RAG_MAX_QUERY_LENGTH,
        widget=forms.TextInput(attrs={"class": "vTextField"}),
        help_text="Empty: a sample question about terminating an agreement.",
    )
    preview_passages = forms.CharField(
        label="Sample passages",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text=f"Source text to quote; separate passages with a line holding only {PASSAGE_SEPARATOR}. "
        "Empty: one sample clause.",
    )

    class Meta:
        model = PromptTemplate
        fields = [
            "response_style",
            "citation_style",
            "strictness",
            "follow_up_count",
            "system_prompt",
            "user_prompt",
            "instructions_block",
        ]

    def sample(self) -> tuple[str, list[str]]:
        """The question and passages to preview with (the defaults for empty fields)."""
        question = self.cleaned_data.get("preview_question", "").strip() or SAMPLE_QUESTION
        text = self.cleaned_data.get("preview_passages", "")
        passages = [
            "\n".join(block).strip()
            for block in _split(text.splitlines(), PASSAGE_SEPARATOR)
            if "\n".join(block).strip()
        ]
        return question, passages or [SAMPLE_PASSAGE]


def _split(lines: list[str], separator: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line.strip() == separator:
            blocks.append([])
        else:
            blocks[-1].append(line)
    return blocks


def preview_state(request, template: PromptTemplate) -> tuple[PromptPreviewForm, object | None]:
    """The preview form and the filled prompt (`rag.pipeline.preview.PromptPreview`, or None): of the
    saved template on GET, of the fields posted (e.g. unsaved edits) on POST. Never saves: a valid
    form fills `template` in memory only; invalid placeholders are form errors."""
    if request.method == "POST":
        form = PromptPreviewForm(request.POST, instance=template)
        if not form.is_valid():
            return form, None
        question, passages = form.sample()
        return form, prompt_preview(template, question=question, passages=passages)
    form = PromptPreviewForm(instance=template, initial={"preview_question": SAMPLE_QUESTION})
    # A saved template is valid: show its preview at once.
    return form, (prompt_preview(template) if template.pk is not None else None)


def diff_context(template: PromptTemplate, params) -> dict:
    """The context of the diff page of `template` for the query `params`: the chosen `version`
    (default the current one; an unknown one means the newest) against the version before it
    (default) or the template as it is now (`against=current`), unified or side by side (`layout`)."""
    versions = list(selectors.template_versions_of(template=template))
    by_number = {version.version: version for version in versions}
    try:
        chosen = by_number[int(params.get("version", template.version))]
    except (KeyError, ValueError):
        chosen = versions[0] if versions else None
    against = "current" if params.get("against") == "current" else "previous"
    layout = "side_by_side" if params.get("layout") == "side_by_side" else "unified"
    diffs, old_label, new_label = [], "", ""
    if chosen is not None:
        if against == "current":
            old, new = chosen.snapshot, template.snapshot()
            old_label, new_label = f"version {chosen.version}", f"current (version {template.version})"
        else:
            previous = by_number.get(chosen.version - 1)
            old = previous.snapshot if previous else {}
            new = chosen.snapshot
            old_label = f"version {previous.version}" if previous else "nothing (first version)"
            new_label = f"version {chosen.version}"
        diffs = diffing.snapshot_diff(old, new)
    return {
        "versions": versions,
        "chosen": chosen,
        "against": against,
        "layout": layout,
        "old_label": old_label,
        "new_label": new_label,
        "changed": [diff for diff in diffs if diff.changed],
        "unchanged": [diff.label for diff in diffs if not diff.changed],
    }


def compare_links(version: PromptTemplateVersion, *, site_name: str) -> str:
    """A history row's links to the diff page of the admin site `site_name`: this version against
    the previous one and against the current template."""
    # version.template_id is the foreign key: the template's pk, not its slug.
    url = reverse(f"{site_name}:templates_admin_prompttemplate_diff", args=[version.template_id])
    return format_html(
        '<a href="{}?version={}&amp;against=previous">with previous</a> · '
        '<a href="{}?version={}&amp;against=current">with current</a>',
        url,
        version.version,
        url,
        version.version,
    )
