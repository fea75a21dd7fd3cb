"""Django admin: a template's version history with a diff of a chosen version against the one
before it or the current template, unified or side by side, escaped; and the change form's
placeholder checks."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from templates_admin import services
from templates_admin.models import PromptTemplate
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BALANCED = "legal_analysis_balanced"


@pytest.fixture
def edited(tenant, make_template):
    """A tenant template at version 3: v2 changed the user prompt, v3 the instructions."""
    make_template(tenant)
    services.template_update(
        tenant=tenant,
        template_id="custom_terse",
        data={"user_prompt": "Context: {context}\n\nQ: <b>{question}</b>\n\n{instructions}"},
    )
    return services.template_update(
        tenant=tenant, template_id="custom_terse", data={"instructions_block": "Two sentences."}
    )


def _diff(client, template, **params):
    response = client.get(reverse("admin:templates_admin_prompttemplate_diff", args=[template.pk]), params)
    assert response.status_code == 200
    return response


def test_by_default_the_current_version_is_compared_with_the_one_before(admin_client, edited):
    response = _diff(admin_client, edited)
    assert (response.context["chosen"].version, response.context["against"]) == (3, "previous")
    assert [diff.name for diff in response.context["changed"]] == ["instructions_block"]
    lines = [(line.kind, line.text) for line in response.context["changed"][0].unified]
    assert lines[1:] == [("removed", "One sentence."), ("added", "Two sentences.")]
    html = response.content.decode()
    assert "From version 2 to version 3" in html and "Unchanged: Name, Description" in html


def test_a_version_against_the_one_before_escapes_the_prompts(admin_client, edited):
    response = _diff(admin_client, edited, version=2)
    changed = response.context["changed"]
    assert [diff.name for diff in changed] == ["user_prompt"]
    added = [line.text for line in changed[0].unified if line.kind == "added"]
    assert added == ["Q: <b>{question}</b>"]
    html = response.content.decode()
    assert "Q: &lt;b&gt;{question}&lt;/b&gt;" in html and "<b>{question}</b>" not in html


def test_a_version_against_the_current_template_side_by_side(admin_client, edited):
    response = _diff(admin_client, edited, version=1, against="current", layout="side_by_side")
    assert {diff.name for diff in response.context["changed"]} == {"user_prompt", "instructions_block"}
    rows = {diff.name: diff.side_by_side for diff in response.context["changed"]}
    assert [(row.kind, row.old_text, row.new_text) for row in rows["instructions_block"]] == [
        ("changed", "One sentence.", "Two sentences.")
    ]
    html = response.content.decode()
    assert "From version 1 to current (version 3)" in html and 'class="diff side-by-side"' in html
    assert "Q: &lt;b&gt;{question}&lt;/b&gt;" in html


def test_the_first_version_is_compared_with_nothing_and_a_bad_version_means_the_newest(admin_client, edited):
    first = _diff(admin_client, edited, version=1)
    assert "From nothing (first version) to version 1" in first.content.decode()
    assert "user_prompt" in {diff.name for diff in first.context["changed"]}
    assert _diff(admin_client, edited, version="x").context["chosen"].version == 3
    assert _diff(admin_client, edited, version=99).context["chosen"].version == 3


def test_the_change_form_links_each_version_to_its_diffs(admin_client, edited):
    html = admin_client.get(
        reverse("admin:templates_admin_prompttemplate_change", args=[edited.pk])
    ).content.decode()
    url = reverse("admin:templates_admin_prompttemplate_diff", args=[edited.pk])
    for version in (1, 2, 3):
        assert f'href="{url}?version={version}&amp;against=previous"' in html
        assert f'href="{url}?version={version}&amp;against=current"' in html


def test_the_diff_needs_the_view_permission(client, admin_client, edited):
    url = reverse("admin:templates_admin_prompttemplate_diff", args=[edited.pk])
    assert (
        admin_client.get(reverse("admin:templates_admin_prompttemplate_diff", args=[999999])).status_code
        == 404
    )
    client.force_login(UserFactory(is_staff=True))
    assert client.get(url).status_code == 403
    viewer = UserFactory(is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_prompttemplate"))
    client.force_login(viewer)
    assert client.get(url).status_code == 200


# --- the change form's placeholder checks ---------------------------------------------------------


def _form(template, **changes):
    fields = (
        "name",
        "description",
        "response_style",
        "citation_style",
        "strictness",
        "follow_up_count",
        "system_prompt",
        "user_prompt",
        "instructions_block",
    )
    data = {name: getattr(template, name) for name in fields}
    return {**data, "versions-TOTAL_FORMS": 1, "versions-INITIAL_FORMS": 1, **changes}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("user_prompt", "Context: {context}", "The user prompt must contain {question}."),
        ("user_prompt", "Question: {question}", "The user prompt must contain {context}."),
        ("user_prompt", "{context} {question} {0}", "Positional placeholder {0}: name it, e.g. {context}."),
        ("user_prompt", "{context} {question} {question!r}", "has a conversion or format spec"),
        ("user_prompt", "{context} {question} {", "Malformed braces"),
        ("system_prompt", "You are {persona}.", "Unknown placeholder {persona}."),
    ],
)
def test_the_change_form_refuses_bad_placeholders_on_their_field(admin_client, field, value, message):
    builtin = PromptTemplate.objects.get(template_id=BALANCED, tenant__isnull=True)
    url = reverse("admin:templates_admin_prompttemplate_change", args=[builtin.pk])
    response = admin_client.post(url, _form(builtin, **{field: value}))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors[field]
    assert any(message in error for error in errors), errors
    if "must contain" not in message:  # a syntax problem also lists what is allowed
        assert any(error.startswith("Allowed placeholders: {context}, {question}") for error in errors)
    builtin.refresh_from_db()
    assert builtin.version == 1
