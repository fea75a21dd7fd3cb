"""The console's prompt template history: diff of a version (against the previous one or the
current state), revert of the firm's own template to a version (a new version), and preview (the
built-ins too, read-only); another firm's template is a 404 everywhere, members and viewers get in
nowhere."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry

from templates_admin.models import PromptTemplate
from templates_admin.services import template_update
from tenants.models import Role
from tests.factories import MembershipFactory

from .conftest import OTHER_MARKER, OWN_MARKER, make_template

pytestmark = pytest.mark.django_db

TEMPLATES = "/manage/templates_admin/prompttemplate/"
OWN_TEMPLATE_ID = f"tpl-{OWN_MARKER}"
FIRST_USER_PROMPT = "{context}\n\nQuestion: {question}"
SECOND_USER_PROMPT = "Sources:\n{context}\n\nThe question: {question}"


@pytest.fixture
def edited(tenant):
    """The firm's template at version 3: v2 changed the user prompt, v3 the instructions."""
    template = make_template(tenant, OWN_MARKER)
    data = {"user_prompt": SECOND_USER_PROMPT}
    template_update(tenant=tenant, template_id=template.template_id, data=data)
    data = {"instructions_block": "Answer in one paragraph."}
    return template_update(tenant=tenant, template_id=template.template_id, data=data)


def _url(template, view: str) -> str:
    return f"{TEMPLATES}{template.pk}/{view}/"


def _builtin() -> PromptTemplate:
    return PromptTemplate.objects.filter(tenant__isnull=True).order_by("template_id").first()


def test_the_change_page_links_each_version_to_its_diffs(console, edited):
    page = console.get(_url(edited, "change")).content.decode()
    diff = _url(edited, "diff")
    assert f'href="{diff}?version=2&amp;against=previous"' in page
    assert f'href="{diff}?version=1&amp;against=current"' in page
    assert f'href="{_url(edited, "preview")}"' in page
    assert 'href="/admin/' not in page


def test_the_preview_button_is_on_the_firms_change_page_only(console, edited):
    button = 'formaction="{}"'.format(_url(edited, "preview"))
    assert button in console.get(_url(edited, "change")).content.decode()
    # Built-ins are shown read-only (nothing to post); the add page has no saved template to preview,
    # and a button posting to the add page itself would save it.
    assert 'id="prompt-preview"' not in console.get(_url(_builtin(), "change")).content.decode()
    assert 'id="prompt-preview"' not in console.get(TEMPLATES + "add/").content.decode()


def test_diff_of_a_version_against_the_previous_one(console, edited):
    response = console.get(_url(edited, "diff"), {"version": 2})
    assert response.status_code == 200
    assert [diff.name for diff in response.context["changed"]] == ["user_prompt"]
    page = response.content.decode()
    assert "From version 1 to version 2" in page and "The question: {question}" in page
    assert 'href="/admin/' not in page


def test_line_endings_alone_are_no_change(console, tenant, edited):
    """A browser posts the textareas with \r\n: a save that only edits the system prompt does not
    show the untouched user prompt as changed (#36, item 9)."""
    data = {
        "system_prompt": "You are a careful legal assistant.\r\nCite the clause number first.",
        "user_prompt": SECOND_USER_PROMPT.replace("\n", "\r\n"),
    }
    saved = template_update(tenant=tenant, template_id=edited.template_id, data=data)
    for against in ("previous", "current"):
        response = console.get(_url(saved, "diff"), {"version": saved.version, "against": against})
        changed = [diff.name for diff in response.context["changed"]]
        assert changed == (["system_prompt"] if against == "previous" else [])


def test_the_diff_is_styled_by_class_not_inline_styles(console, edited):
    """The console's CSP blocks inline styles: every line of the diff is its own element with a
    class the site's stylesheet colours."""
    for layout in ("unified", "side_by_side"):
        page = console.get(_url(edited, "diff"), {"version": 2, "layout": layout}).content.decode()
        assert "style=" not in page.split('id="content-main"')[1]
        assert "/static/css/admin-pages.css" in page
    page = console.get(_url(edited, "diff"), {"version": 2}).content.decode()
    assert '<span class="diff-line added">+Sources:</span>' in page
    assert '<span class="diff-line removed">-Question: {question}</span>' in page


def test_diff_of_a_version_against_the_current_template_offers_the_revert(console, edited):
    params = {"version": 1, "against": "current", "layout": "side_by_side"}
    response = console.get(_url(edited, "diff"), params)
    assert {diff.name for diff in response.context["changed"]} == {"user_prompt", "instructions_block"}
    page = response.content.decode()
    assert 'class="diff side-by-side"' in page
    assert f'action="{_url(edited, "revert")}"' in page and 'value="Revert to version 1"' in page
    # The current version has nothing to revert to.
    assert not console.get(_url(edited, "diff")).context["can_revert"]


def test_revert_creates_a_version_equal_to_the_old_one(console, tenant, edited):
    first = edited.versions.get(version=1).snapshot

    response = console.post(_url(edited, "revert"), {"version": 1})

    assert response.status_code == 302 and response.url == _url(edited, "change")
    edited.refresh_from_db()
    assert edited.version == 4 and edited.versions.count() == 4
    assert edited.snapshot() == first and edited.versions.get(version=4).snapshot == first
    assert edited.user_prompt == FIRST_USER_PROMPT and edited.instructions_block == ""
    entry = LogEntry.objects.get(object_id=str(edited.pk))
    assert entry.change_message == "Reverted to version 1 (now version 4)."
    # The diff of the new version against version 3 shows both fields going back.
    changed = console.get(_url(edited, "diff"), {"version": 4}).context["changed"]
    assert {diff.name for diff in changed} == {"user_prompt", "instructions_block"}


@pytest.mark.parametrize("version", ["99", "x", ""])
def test_revert_to_a_missing_version_is_an_error_and_changes_nothing(console, edited, version):
    response = console.post(_url(edited, "revert"), {"version": version}, follow=True)
    assert response.status_code == 200
    shown = [str(message) for message in response.context["messages"]]
    assert shown == [f"{OWN_TEMPLATE_ID} has no version {version!r}."]
    edited.refresh_from_db()
    assert edited.version == 3


def test_a_get_of_revert_shows_the_diff_and_changes_nothing(console, edited):
    response = console.get(_url(edited, "revert"), {"version": 1}, follow=True)
    assert response.status_code == 200 and response.context["against"] == "current"
    assert response.context["chosen"].version == 1
    edited.refresh_from_db()
    assert edited.version == 3


def test_preview_of_the_firms_template_and_of_unsaved_edits(console, edited):
    response = console.get(_url(edited, "preview"))
    assert response.status_code == 200
    assert "The question:" in response.context["preview"].prompt.user
    edits = {**response.context["form"].initial, "user_prompt": "EDITED {context} {question}"}
    edits = {name: value for name, value in edits.items() if value is not None}
    response = console.post(_url(edited, "preview"), {**edits, "preview_question": "Is notice needed?"})
    assert response.context["preview"].prompt.user.startswith("EDITED")
    assert "Is notice needed?" in response.context["preview"].prompt.user
    edited.refresh_from_db()
    assert edited.version == 3 and edited.user_prompt == SECOND_USER_PROMPT  # nothing saved
    assert 'href="/admin/' not in response.content.decode()


def test_builtins_can_be_previewed_and_diffed_but_not_reverted(console, tenant):
    builtin = _builtin()
    before = builtin.snapshot(), builtin.version
    assert console.get(_url(builtin, "preview")).context["preview"] is not None
    diff = console.get(_url(builtin, "diff"))
    assert diff.status_code == 200 and not diff.context["can_revert"]
    assert console.post(_url(builtin, "revert"), {"version": 1}).status_code == 403
    builtin.refresh_from_db()
    assert (builtin.snapshot(), builtin.version) == before
    assert not PromptTemplate.objects.filter(tenant=tenant).exists()  # no copy made either


@pytest.mark.parametrize("view", ["diff", "preview", "revert"])
def test_another_firms_template_is_a_404(console, other_tenant, view):
    theirs = make_template(other_tenant, OTHER_MARKER)
    template_update(tenant=other_tenant, template_id=theirs.template_id, data={"name": "v2"})
    assert console.get(_url(theirs, view), {"version": 1}).status_code == 404
    assert console.post(_url(theirs, view), {"version": 1, "user_prompt": "{context}"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.version == 2 and theirs.name == "v2"


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER])
@pytest.mark.parametrize("view", ["diff", "preview", "revert"])
def test_members_and_viewers_reach_none_of_it(client, tenant, edited, role, view):
    client.force_login(MembershipFactory(tenant=tenant, role=role).user)
    assert client.get(_url(edited, view), {"version": 1}).status_code == 302
    assert client.post(_url(edited, view), {"version": 1}).status_code == 302
    edited.refresh_from_db()
    assert edited.version == 3
