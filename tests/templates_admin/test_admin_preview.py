"""Django admin: preview a template's prompt for a sample question, as saved or as edited on the
change form, filled by the pipeline's own builders, without saving anything."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from rag.pipeline.preview import SAMPLE_PASSAGE, SAMPLE_QUESTION
from templates_admin.models import PromptTemplate, PromptTemplateVersion
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BALANCED = "legal_analysis_balanced"
PROMPT_FIELDS = (
    "response_style",
    "citation_style",
    "strictness",
    "follow_up_count",
    "system_prompt",
    "user_prompt",
    "instructions_block",
)


@pytest.fixture
def builtin():
    return PromptTemplate.objects.get(template_id=BALANCED, tenant__isnull=True)


def _preview_url(template):
    return reverse("admin:templates_admin_prompttemplate_preview", args=[template.pk])


def _post(template, **changes):
    """What the change form posts (every model field, the inline's management form), edited."""
    data = {name: getattr(template, name) for name in ("name", "description", *PROMPT_FIELDS)}
    return {**data, "versions-TOTAL_FORMS": 1, "versions-INITIAL_FORMS": 1, **changes}


def _unchanged(template):
    stored = PromptTemplate.objects.get(pk=template.pk)
    assert (stored.version, stored.user_prompt) == (template.version, template.user_prompt)
    assert PromptTemplateVersion.objects.filter(template=template).count() == template.version


def test_the_change_form_offers_a_preview_button_and_links(admin_client, builtin):
    page = admin_client.get(reverse("admin:templates_admin_prompttemplate_change", args=[builtin.pk]))
    html = page.content.decode()
    assert f'formaction="{_preview_url(builtin)}"' in html and 'name="preview_question"' in html
    assert f'href="{_preview_url(builtin)}"' in html
    assert f'href="{reverse("admin:templates_admin_prompttemplate_diff", args=[builtin.pk])}"' in html
    add = admin_client.get(reverse("admin:templates_admin_prompttemplate_add")).content.decode()
    assert f'formaction="{reverse("admin:templates_admin_prompttemplate_preview_new")}"' in add


def test_get_previews_the_saved_template(admin_client, builtin):
    response = admin_client.get(_preview_url(builtin))
    assert response.status_code == 200
    preview = response.context["preview"]
    assert SAMPLE_QUESTION in preview.prompt.user and SAMPLE_PASSAGE in preview.prompt.user
    assert '<source id="1" doc_id="doc_42" title="Sample document 1"' in preview.prompt.user
    assert "REQUIREMENTS:" in preview.prompt.user
    assert preview.prompt.template_id == BALANCED and preview.estimated_tokens > 0
    html = response.content.decode()
    assert "&lt;source id=&quot;1&quot; doc_id=&quot;doc_42&quot;" in html  # shown as text
    assert f'<td class="estimated-tokens">{preview.estimated_tokens}</td>' in html
    _unchanged(builtin)


def test_posting_the_change_form_previews_the_edits_without_saving(admin_client, builtin):
    edited = "EDITED {question}\n\nSources:\n{context}"
    response = admin_client.post(
        _preview_url(builtin),
        _post(
            builtin, user_prompt=edited, citation_style="bracketed_ids", preview_question="Is notice needed?"
        ),
    )
    assert response.status_code == 200, response.context["form"].errors
    prompt = response.context["preview"].prompt
    assert prompt.user.startswith('EDITED Is notice needed?\n\nSources:\n<source id="doc_42"')
    # Without {instructions}, the requirements are appended after the context.
    assert prompt.user.index("REQUIREMENTS:") > prompt.user.index("</source boundary=")
    assert prompt.citation_style == "bracketed_ids"
    _unchanged(builtin)


def test_several_passages_and_the_question_are_escaped_on_the_page(admin_client, builtin):
    data = _post(
        builtin,
        preview_question="<script>alert(1)</script>?",
        preview_passages="First clause.\n---\nSecond <b>clause</b>.\n---\n",
    )
    response = admin_client.post(_preview_url(builtin), data)
    user = response.context["preview"].prompt.user
    assert '<source id="1"' in user and '<source id="2"' in user and '<source id="3"' not in user
    assert "Second <b>clause</b>." in user
    html = response.content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;?" in html
    assert "Second &lt;b&gt;clause&lt;/b&gt;." in html


@pytest.mark.parametrize(
    ("user_prompt", "message"),
    [
        ("{context} {question} {secret}", "Unknown placeholder {secret}."),
        ("Context: {context}", "The user prompt must contain {question}."),
        ("Question: {question}", "The user prompt must contain {context}."),
        ("{context} {question} {context.__class__}", "uses attribute or index access"),
    ],
)
def test_invalid_placeholders_are_form_errors_and_nothing_renders(
    admin_client, builtin, user_prompt, message
):
    response = admin_client.post(_preview_url(builtin), _post(builtin, user_prompt=user_prompt))
    assert response.status_code == 200 and response.context["preview"] is None
    assert any(message in error for error in response.context["form"].errors["user_prompt"])
    _unchanged(builtin)


def test_a_new_template_can_be_previewed_from_the_add_form(admin_client, tenant):
    data = {
        "tenant": tenant.pk,
        "template_id": "draft",
        "name": "Draft",
        "response_style": "terse",
        "citation_style": "end_list",
        "strictness": "strict",
        "follow_up_count": 0,
        "system_prompt": "You are terse.",
        "user_prompt": "{context}\n\n{question}",
        "instructions_block": "",
    }
    response = admin_client.post(reverse("admin:templates_admin_prompttemplate_preview_new"), data)
    prompt = response.context["preview"].prompt
    assert prompt.system.startswith("You are terse.") and "MUST ONLY use provided sources" in prompt.system
    assert "Do not generate follow-up questions" in prompt.user
    assert not PromptTemplate.objects.filter(template_id="draft").exists()
    assert (
        admin_client.get(reverse("admin:templates_admin_prompttemplate_preview_new")).context["preview"]
        is None
    )


def test_preview_needs_the_view_permission_and_an_existing_template(client, admin_client, builtin):
    assert (
        admin_client.get(reverse("admin:templates_admin_prompttemplate_preview", args=[999999])).status_code
        == 404
    )
    assert admin_client.get("/admin/templates_admin/prompttemplate/abc/preview/").status_code == 404
    user = UserFactory(is_staff=True)
    client.force_login(user)
    assert client.get(_preview_url(builtin)).status_code == 403
    assert client.post(_preview_url(builtin), _post(builtin)).status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="view_prompttemplate"))
    client.force_login(user)
    assert client.get(_preview_url(builtin)).status_code == 200


def test_with_claudes_citations_the_preview_shows_the_prompt_claude_gets(admin_client, builtin, settings):
    settings.RAG_LLM_PROVIDER, settings.ANTHROPIC_CITATIONS = "anthropic", True
    preview = admin_client.get(_preview_url(builtin)).context["preview"]
    # The passages go beside the prompt as search results: the prompt does not copy them.
    assert SAMPLE_PASSAGE[:60] not in preview.prompt.user and preview.prompt.sources_attached
    assert "search results" in preview.prompt.user
    settings.ANTHROPIC_CITATIONS = False
    assert SAMPLE_PASSAGE[:60] in admin_client.get(_preview_url(builtin)).context["preview"].prompt.user
