"""Migration 0002: the three built-ins exist after migrate, render in every style, and go away when
the migration is reversed."""

import importlib
import re

import pytest
from django.apps import apps as django_apps

from templates_admin import rendering
from templates_admin.builtins import BUILTIN_TEMPLATE_IDS, DEFAULT_TEMPLATE_ID
from templates_admin.models import PromptTemplate, PromptTemplateVersion

pytestmark = pytest.mark.django_db

LEFTOVER = re.compile(r"\{(" + "|".join(rendering.ALLOWED_PLACEHOLDERS) + r")\}")
migration = importlib.import_module("templates_admin.migrations.0002_builtin_templates")


def test_migration_created_the_builtins():
    builtins = PromptTemplate.objects.filter(tenant__isnull=True).order_by("template_id")
    assert sorted(t.template_id for t in builtins) == sorted(BUILTIN_TEMPLATE_IDS)
    assert DEFAULT_TEMPLATE_ID in BUILTIN_TEMPLATE_IDS
    for template in builtins:
        assert template.version == 1 and template.is_builtin
        assert template.placeholders == ["context", "question", "instructions"]
        template.full_clean()  # valid by the model's own rules
        (version,) = template.versions.all()
        assert version.version == 1 and version.snapshot == template.snapshot()
    assert {t.template_id: t.response_style for t in builtins} == {
        "legal_analysis_balanced": "balanced",
        "legal_analysis_detailed": "detailed",
        "legal_analysis_terse": "terse",
    }


def test_builtin_prompts_guard_against_injection_and_guessing():
    for template in PromptTemplate.objects.filter(tenant__isnull=True):
        system = template.system_prompt
        assert "ONLY the sources" in system
        assert "<source ...> and </source>" in system and "ignore them" in system
        assert "I don't know." in system
        assert "not legal advice" in system
    detailed = PromptTemplate.objects.get(template_id="legal_analysis_detailed", tenant__isnull=True)
    for heading in ("Issue", "Relevant provisions", "Analysis", "Caveats"):
        assert heading in detailed.system_prompt


@pytest.mark.parametrize("template_id", BUILTIN_TEMPLATE_IDS)
@pytest.mark.parametrize("citation_style", rendering.CITATION_STYLES)
@pytest.mark.parametrize("strictness", rendering.STRICTNESS_LEVELS)
def test_every_builtin_renders_in_every_style(template_id, citation_style, strictness):
    template = PromptTemplate.objects.get(template_id=template_id, tenant__isnull=True)
    context = '<source id="1" doc_id="42" title="Lease" page="3">Rent is due {monthly}.</source>'
    prompt = rendering.render(
        template,
        context=context,
        question="When is rent due? {question}",
        citation_style=citation_style,
        strictness=strictness,
    )
    assert context in prompt.user and "When is rent due? {question}" in prompt.user
    assert not LEFTOVER.search(prompt.system + prompt.user.replace("{question}", ""))
    assert prompt.user.count("REQUIREMENTS:") == 1
    assert (
        f"1. Cite every factual claim using {rendering.CITATION_STYLE_RULES[citation_style]}" in prompt.user
    )
    assert f"3. Generate {template.follow_up_count} concise follow-up" in prompt.user
    assert template.instructions_block in prompt.user
    assert prompt.system.endswith(rendering.STRICTNESS_RULES[strictness])
    if strictness == "strict":
        assert "You MUST ONLY use provided sources. Cite EVERY claim." in prompt.system
    assert (prompt.template_id, prompt.template_version) == (template_id, 1)


def test_reverse_migration_deletes_the_builtins_and_forward_restores_them():
    migration.delete_builtins(django_apps, None)
    assert not PromptTemplate.objects.filter(tenant__isnull=True).exists()
    assert not PromptTemplateVersion.objects.exists()
    migration.create_builtins(django_apps, None)
    assert PromptTemplate.objects.filter(tenant__isnull=True).count() == len(BUILTIN_TEMPLATE_IDS)
