"""Prompt template admin API: list, create-or-update, read, replace, change, delete, history and
revert; built-in overrides; bad input; another tenant's template is a 404; admins only."""

from __future__ import annotations

import pytest

from rag.api.admin_templates import TemplateDetailApi
from templates_admin.builtins import BUILTIN_TEMPLATE_IDS
from templates_admin.models import PromptTemplate
from tests.api.conftest_admin import ROLES_BELOW_ADMIN, session_admin

__all__ = ["session_admin"]  # fixtures, imported for pytest

pytestmark = pytest.mark.django_db

TEMPLATES = "/api/v1/rag/admin/templates"
USER_PROMPT = "Context: {context}\n\nQuestion: {question}\n\n{instructions}"
OUTPUT_FIELDS = {
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
    "is_builtin",
    "version",
    "updated_at",
}


def detail(template_id: str) -> str:
    return f"{TEMPLATES}/{template_id}"


def new_template(template_id: str = "custom_terse", **fields) -> dict:
    return {
        "template_id": template_id,
        "name": "Custom Terse",
        "system_prompt": "You are a careful legal research assistant. Cite as {citation_style}.",
        "user_prompt": USER_PROMPT,
        "citation_style": "bracketed_ids",
        **fields,
    }


@pytest.fixture
def custom(admin_client):
    """The tenant's own template "custom_terse" (version 1)."""
    response = admin_client.post(TEMPLATES, new_template(), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


@pytest.fixture
def others_template(other_admin_client):
    """A template of the other tenant, "globex_private"."""
    response = other_admin_client.post(
        TEMPLATES, new_template("globex_private", name="Secret"), format="json"
    )
    assert response.status_code == 201
    return response.json()


# --- list -----------------------------------------------------------------------------------------


def test_list_shows_the_built_ins_with_every_field(admin_client):
    response = admin_client.get(TEMPLATES)
    assert response.status_code == 200
    rows = response.json()
    assert [row["template_id"] for row in rows] == sorted(BUILTIN_TEMPLATE_IDS)
    for row in rows:
        assert set(row) == OUTPUT_FIELDS
        assert row["is_builtin"] is True
        assert {"context", "question"} <= set(row["placeholders"])


def test_list_has_own_templates_but_never_another_tenants(admin_client, custom, others_template):
    ids = [row["template_id"] for row in admin_client.get(TEMPLATES).json()]
    assert "custom_terse" in ids
    assert "globex_private" not in ids


# --- POST: create or update -----------------------------------------------------------------------


def test_post_with_a_new_id_creates_version_1(admin_client):
    response = admin_client.post(TEMPLATES, new_template(description="Short answers."), format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["template_id"] == "custom_terse" and body["version"] == 1 and body["is_builtin"] is False
    assert body["citation_style"] == "bracketed_ids" and body["description"] == "Short answers."
    assert body["placeholders"] == ["context", "question", "instructions", "citation_style"]
    assert body["response_style"] == "balanced"  # the model's default
    assert admin_client.get(detail("custom_terse")).json() == body


def test_post_with_an_own_id_is_a_new_version_of_the_given_fields(admin_client, custom):
    response = admin_client.post(
        TEMPLATES, {"template_id": "custom_terse", "strictness": "strict"}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 2 and body["strictness"] == "strict"
    assert body["name"] == custom["name"] and body["system_prompt"] == custom["system_prompt"]
    assert PromptTemplate.objects.filter(template_id="custom_terse").count() == 1


def test_post_with_a_builtin_id_creates_the_tenants_override(admin_client, other_admin_client):
    builtin = admin_client.get(detail("legal_analysis_terse")).json()
    response = admin_client.post(
        TEMPLATES, {"template_id": "legal_analysis_terse", "follow_up_count": 0}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["is_builtin"] is False and body["version"] == 1 and body["follow_up_count"] == 0
    assert body["system_prompt"] == builtin["system_prompt"]  # the rest is the built-in's

    listed = [
        row for row in admin_client.get(TEMPLATES).json() if row["template_id"] == "legal_analysis_terse"
    ]
    assert listed == [body]
    # The built-in itself is untouched, and other tenants still see it.
    assert other_admin_client.get(detail("legal_analysis_terse")).json() == builtin


def test_the_same_id_in_two_tenants_are_two_templates(admin_client, other_admin_client, custom):
    response = other_admin_client.post(TEMPLATES, new_template(name="Globex's own"), format="json")
    assert response.status_code == 201 and response.json()["version"] == 1
    assert admin_client.get(detail("custom_terse")).json()["name"] == "Custom Terse"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({**new_template(), "template_id": None}, "template_id"),
        ({k: v for k, v in new_template().items() if k != "template_id"}, "template_id"),
        (new_template("not a slug!"), "template_id"),
        (new_template("x" * 101), "template_id"),
        (new_template(name=""), "name"),
        ({k: v for k, v in new_template().items() if k != "name"}, "name"),
        ({k: v for k, v in new_template().items() if k != "system_prompt"}, "system_prompt"),
        (new_template(user_prompt="Question: {question}"), "user_prompt"),
        (new_template(user_prompt=USER_PROMPT + " {secret}"), "user_prompt"),
        (new_template(system_prompt="Unbalanced { brace"), "system_prompt"),
        (new_template(system_prompt="Attribute {context.__class__}"), "system_prompt"),
        (new_template(citation_style="footnotes"), "citation_style"),
        (new_template(response_style="verbose"), "response_style"),
        (new_template(strictness="paranoid"), "strictness"),
        (new_template(follow_up_count=6), "follow_up_count"),
        (new_template(follow_up_count=-1), "follow_up_count"),
        (new_template(follow_up_count="two"), "follow_up_count"),
    ],
)
def test_post_bad_input_is_400_with_field_details(admin_client, payload, field):
    response = admin_client.post(TEMPLATES, payload, format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json()["details"]
    assert not PromptTemplate.objects.filter(tenant__isnull=False).exists()


def test_post_bad_update_of_an_own_template_changes_nothing(admin_client, custom):
    response = admin_client.post(
        TEMPLATES, {"template_id": "custom_terse", "user_prompt": "no placeholders"}, format="json"
    )
    assert response.status_code == 400 and "user_prompt" in response.json()["details"]
    assert admin_client.get(detail("custom_terse")).json() == custom


def test_post_refuses_a_body_for_another_tenant(admin_client, other_tenant):
    response = admin_client.post(TEMPLATES, new_template(tenant_id=other_tenant.slug), format="json")
    assert response.status_code == 403
    assert not PromptTemplate.objects.filter(tenant__isnull=False).exists()


def test_post_malformed_json_is_400(admin_client):
    response = admin_client.post(TEMPLATES, "{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["error_type"] == "ParseError"


# --- GET / PUT / PATCH / DELETE one template ------------------------------------------------------


def test_get_an_unknown_or_another_tenants_template_is_404(admin_client, others_template):
    for template_id in ("globex_private", "no_such_template"):
        response = admin_client.get(detail(template_id))
        assert response.status_code == 404
        assert response.json()["error_type"] == "NotFound"


def test_put_replaces_every_editable_field_as_a_new_version(admin_client, custom):
    replacement = {
        "name": "Replaced",
        "description": "",
        "response_style": "detailed",
        "system_prompt": "New system prompt.",
        "user_prompt": "{question}\n\n{context}",
        "instructions_block": "Quote the clause.",
        "citation_style": "end_list",
        "strictness": "lenient",
        "follow_up_count": 3,
    }
    response = admin_client.put(detail("custom_terse"), replacement, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 2
    assert {name: body[name] for name in replacement} == replacement
    assert body["placeholders"] == ["question", "context"]


def test_put_with_only_system_prompt_updates_that_field(admin_client, custom):
    # The orchestration spec's own example: PUT /admin/templates/custom_terse {"system_prompt": ...}.
    response = admin_client.put(detail("custom_terse"), {"system_prompt": "Updated prompt..."}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["system_prompt"] == "Updated prompt..." and body["version"] == 2
    unchanged = set(PromptTemplate.EDITABLE_FIELDS) - {"system_prompt"}
    assert {name: body[name] for name in unchanged} == {name: custom[name] for name in unchanged}


def test_put_with_nothing_to_change_is_400_and_changes_nothing(admin_client, custom):
    for payload in ({}, {"template_id": "custom_terse"}):
        response = admin_client.put(detail("custom_terse"), payload, format="json")
        assert response.status_code == 400
        assert "non_field_errors" in response.json()["details"]
    assert admin_client.get(detail("custom_terse")).json() == custom


def test_put_and_patch_take_the_same_optional_fields(admin_client):
    fields = TemplateDetailApi.ChangeInputSerializer().fields
    assert set(fields) == {"template_id", *PromptTemplate.EDITABLE_FIELDS}
    assert not any(field.required for field in fields.values())
    schema = admin_client.get("/api/schema/", {"format": "json"}).json()
    operations = schema["paths"]["/api/v1/rag/admin/templates/{template_id}"]
    for method in ("put", "patch"):
        ref = operations[method]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        body = schema["components"]["schemas"][ref.rpartition("/")[2]]
        # template_id may be repeated but never changed: read-only, so not offered for writing.
        assert set(body["properties"]) == set(fields) - {"template_id"} and not body.get("required")


def test_patch_changes_only_the_given_fields(admin_client, custom):
    response = admin_client.patch(
        detail("custom_terse"), {"system_prompt": "Updated prompt..."}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["system_prompt"] == "Updated prompt..." and body["version"] == 2
    assert body["user_prompt"] == custom["user_prompt"] and body["name"] == custom["name"]
    assert body["placeholders"] == ["context", "question", "instructions"]


def test_patch_of_a_builtin_creates_the_override(admin_client):
    response = admin_client.patch(detail("legal_analysis_detailed"), {"name": "Our detailed"}, format="json")
    assert response.status_code == 200
    assert response.json()["is_builtin"] is False and response.json()["name"] == "Our detailed"
    assert PromptTemplate.objects.get(tenant__isnull=True, template_id="legal_analysis_detailed").name != (
        "Our detailed"
    )


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "non_field_errors"),
        ({"template_id": "custom_terse"}, "non_field_errors"),
        ({"template_id": "renamed", "name": "x"}, "template_id"),
        ({"citation_style": "footnotes"}, "citation_style"),
        ({"user_prompt": "{question} only"}, "user_prompt"),
        ({"follow_up_count": 9}, "follow_up_count"),
        ({"name": ""}, "name"),
    ],
)
def test_patch_bad_input_is_400_and_changes_nothing(admin_client, custom, payload, field):
    response = admin_client.patch(detail("custom_terse"), payload, format="json")
    assert response.status_code == 400
    assert field in response.json()["details"]
    assert admin_client.get(detail("custom_terse")).json() == custom


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_writes_to_another_tenants_template_are_404(admin_client, others_template, method):
    body = {name: others_template[name] for name in PromptTemplate.EDITABLE_FIELDS}
    response = getattr(admin_client, method)(detail("globex_private"), body, format="json")
    assert response.status_code == 404
    template = PromptTemplate.objects.get(template_id="globex_private")
    assert (template.version, template.name) == (1, "Secret")


def test_delete_removes_an_own_template_and_its_history(admin_client, custom):
    assert admin_client.delete(detail("custom_terse")).status_code == 204
    assert admin_client.get(detail("custom_terse")).status_code == 404
    assert admin_client.delete(detail("custom_terse")).status_code == 404


def test_delete_of_an_override_brings_the_builtin_back(admin_client):
    admin_client.post(TEMPLATES, {"template_id": "legal_analysis_terse", "name": "Ours"}, format="json")
    assert admin_client.get(detail("legal_analysis_terse")).json()["is_builtin"] is False
    assert admin_client.delete(detail("legal_analysis_terse")).status_code == 204
    restored = admin_client.get(detail("legal_analysis_terse")).json()
    assert restored["is_builtin"] is True and restored["name"] != "Ours"


def test_delete_of_a_builtin_is_403(admin_client):
    response = admin_client.delete(detail("legal_analysis_balanced"))
    assert response.status_code == 403 and response.json()["error_type"] == "PermissionDenied"
    assert PromptTemplate.objects.filter(tenant__isnull=True, template_id="legal_analysis_balanced").exists()


# --- history and revert ---------------------------------------------------------------------------


def test_versions_list_the_history_newest_first(admin_client, custom):
    admin_client.patch(detail("custom_terse"), {"name": "Second"}, format="json")
    admin_client.patch(detail("custom_terse"), {"name": "Third"}, format="json")
    response = admin_client.get(f"{detail('custom_terse')}/versions")
    assert response.status_code == 200
    page = response.json()
    assert page["count"] == 3 and page["next"] is None
    assert [row["version"] for row in page["results"]] == [3, 2, 1]
    assert [row["snapshot"]["name"] for row in page["results"]] == ["Third", "Second", "Custom Terse"]
    assert set(page["results"][0]) == {"version", "snapshot", "created_at", "created_by"}
    assert page["results"][0]["created_by"] is None  # an API key, not a user

    second = admin_client.get(f"{detail('custom_terse')}/versions", {"page_size": 1, "page": 2}).json()
    assert [row["version"] for row in second["results"]] == [2] and second["next"] and second["previous"]


def test_versions_of_a_session_user_name_them(session_admin):
    client, user = session_admin
    assert client.post(TEMPLATES, new_template(), format="json").status_code == 201
    versions = client.get(f"{detail('custom_terse')}/versions").json()["results"]
    assert versions[0]["created_by"] == user.username


def test_versions_of_another_tenants_template_or_a_missing_page_are_404(
    admin_client, custom, others_template
):
    assert admin_client.get(f"{detail('globex_private')}/versions").status_code == 404
    assert admin_client.get(f"{detail('custom_terse')}/versions", {"page": 5}).status_code == 404


def test_revert_restores_an_earlier_version_as_a_new_one(admin_client, custom):
    admin_client.patch(detail("custom_terse"), {"name": "Changed", "strictness": "strict"}, format="json")
    response = admin_client.post(f"{detail('custom_terse')}/revert", {"version": 1}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 3
    assert {k: body[k] for k in ("name", "strictness")} == {k: custom[k] for k in ("name", "strictness")}
    assert admin_client.get(f"{detail('custom_terse')}/versions").json()["count"] == 3


@pytest.mark.parametrize("payload", [{}, {"version": 0}, {"version": "one"}, {"version": None}])
def test_revert_bad_input_is_400(admin_client, custom, payload):
    response = admin_client.post(f"{detail('custom_terse')}/revert", payload, format="json")
    assert response.status_code == 400 and "version" in response.json()["details"]


def test_revert_to_a_missing_version_or_another_tenants_template_is_404(
    admin_client, custom, others_template
):
    assert (
        admin_client.post(f"{detail('custom_terse')}/revert", {"version": 7}, format="json").status_code
        == 404
    )
    response = admin_client.post(f"{detail('globex_private')}/revert", {"version": 1}, format="json")
    assert response.status_code == 404
    assert PromptTemplate.objects.get(template_id="globex_private").version == 1


# --- roles ----------------------------------------------------------------------------------------

ENDPOINTS = [
    ("get", TEMPLATES),
    ("post", TEMPLATES),
    ("get", detail("legal_analysis_balanced")),
    ("put", detail("legal_analysis_balanced")),
    ("patch", detail("legal_analysis_balanced")),
    ("delete", detail("legal_analysis_balanced")),
    ("get", f"{detail('legal_analysis_balanced')}/versions"),
    ("post", f"{detail('legal_analysis_balanced')}/revert"),
]


@pytest.mark.parametrize("role", ROLES_BELOW_ADMIN)
@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_below_admin_is_forbidden(tenant, make_key_client, role, method, url):
    client = make_key_client(tenant, role)
    response = getattr(client, method)(url, {"template_id": "x", "name": "y", "version": 1}, format="json")
    assert response.status_code == 403
    assert response.json()["error_type"] == "PermissionDenied"
    assert not PromptTemplate.objects.filter(tenant__isnull=False).exists()


def test_anonymous_is_401(api_client):
    assert api_client.get(TEMPLATES).status_code == 401
