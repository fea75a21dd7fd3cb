"""Template writes: validation, conflicts, versioning (every state kept), revert, built-in copies
and refusals."""

import pytest
from django.core.exceptions import ValidationError

from ragsite.exceptions import Conflict, NotFound, PermissionDenied
from templates_admin import selectors, services
from templates_admin.models import PromptTemplate, PromptTemplateVersion
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BALANCED = "legal_analysis_balanced"


def test_create_starts_at_version_one_with_its_snapshot(tenant, template_data):
    user = UserFactory()
    template = services.template_create(tenant=tenant, data=template_data, user=user)
    assert (template.tenant, template.version, template.updated_by) == (tenant, 1, user)
    assert template.placeholders == ["context", "question", "instructions"]
    assert (template.strictness, template.follow_up_count) == ("normal", 2)  # defaults
    (version,) = template.versions.all()
    assert version.version == 1 and version.created_by == user
    assert version.snapshot["user_prompt"] == template_data["user_prompt"]
    assert version.snapshot["template_id"] == "custom_terse"


def test_duplicate_template_id_in_a_tenant_is_a_conflict(tenant, other_tenant, make_template):
    make_template(tenant)
    with pytest.raises(Conflict):
        make_template(tenant, name="again")
    assert make_template(other_tenant).tenant == other_tenant  # ids are per tenant
    assert PromptTemplate.objects.filter(template_id="custom_terse").count() == 2


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("user_prompt", "{context} {question} {secret}", "{secret}"),
        ("user_prompt", "{context} {question} {}", "{}"),
        ("user_prompt", "{context} {question} {0}", "{0}"),
        ("user_prompt", "{context.__class__} {question}", "{context.__class__}"),
        ("system_prompt", "You are {persona}.", "{persona}"),
        ("user_prompt", "{context} {question", "Malformed braces"),
        ("user_prompt", "Only {question}", "{context}"),
        ("user_prompt", "Only {context}", "{question}"),
    ],
)
def test_invalid_placeholders_are_validation_errors_naming_them(tenant, make_template, field, value, named):
    with pytest.raises(ValidationError) as error:
        make_template(tenant, **{field: value})
    assert named in " ".join(error.value.message_dict[field])
    assert not PromptTemplate.objects.filter(tenant=tenant).exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("citation_style", "footnotes"),
        ("strictness", "paranoid"),
        ("response_style", "verbose"),
        ("follow_up_count", 6),
        ("template_id", "not a slug"),
        ("name", ""),
        ("version", 7),
        ("tenant", None),
    ],
)
def test_invalid_or_read_only_fields_are_refused(tenant, template_data, field, value):
    with pytest.raises(ValidationError) as error:
        services.template_create(tenant=tenant, data={**template_data, field: value})
    assert field in error.value.message_dict


def test_services_never_write_builtins(template_data):
    with pytest.raises(ValueError, match="tenant is required"):
        services.template_create(tenant=None, data=template_data)
    with pytest.raises(ValueError, match="tenant is required"):
        services.template_update(tenant=None, template_id=BALANCED, data={"name": "x"})


def test_update_bumps_the_version_and_keeps_every_earlier_one(tenant, make_template):
    template = make_template(tenant)
    user = UserFactory()
    services.template_update(tenant=tenant, template_id="custom_terse", data={"name": "Second"}, user=user)
    updated = services.template_update(
        tenant=tenant,
        template_id="custom_terse",
        data={"system_prompt": "Strict assistant. {strictness}", "strictness": "strict"},
    )
    assert updated.pk == template.pk and updated.version == 3
    assert updated.name == "Second"  # partial: untouched fields stay
    assert updated.placeholders == ["context", "question", "instructions", "strictness"]
    history = list(selectors.template_version_list(tenant=tenant, template_id="custom_terse"))
    assert [v.version for v in history] == [3, 2, 1]
    assert [v.snapshot["name"] for v in history] == ["Second", "Second", "Custom Terse"]
    assert [v.snapshot["strictness"] for v in history] == ["strict", "normal", "normal"]
    assert history[1].created_by == user
    stored = PromptTemplate.objects.get(pk=template.pk)
    assert stored.version == 3 and stored.strictness == "strict"


def test_invalid_update_changes_nothing(tenant, make_template):
    template = make_template(tenant)
    with pytest.raises(ValidationError):
        services.template_update(
            tenant=tenant, template_id="custom_terse", data={"name": "x", "user_prompt": "{question}"}
        )
    template.refresh_from_db()
    assert (template.version, template.name) == (1, "Custom Terse")
    assert template.versions.count() == 1


def test_template_id_cannot_change(tenant, make_template):
    make_template(tenant)
    with pytest.raises(ValidationError) as error:
        services.template_update(tenant=tenant, template_id="custom_terse", data={"template_id": "other"})
    assert "template_id" in error.value.message_dict
    same = services.template_update(
        tenant=tenant, template_id="custom_terse", data={"template_id": "custom_terse"}
    )
    assert same.version == 2


def test_updating_a_builtin_creates_the_tenants_override(tenant, other_tenant):
    builtin = selectors.template_get(tenant=tenant, template_id=BALANCED)
    override = services.template_update(tenant=tenant, template_id=BALANCED, data={"follow_up_count": 4})
    assert override.pk != builtin.pk and override.tenant == tenant and override.version == 1
    assert override.follow_up_count == 4
    assert (override.system_prompt, override.user_prompt) == (builtin.system_prompt, builtin.user_prompt)
    builtin.refresh_from_db()
    assert builtin.version == 1 and builtin.follow_up_count == 2  # untouched
    assert selectors.template_get(tenant=tenant, template_id=BALANCED) == override
    assert selectors.template_get(tenant=other_tenant, template_id=BALANCED) == builtin
    again = services.template_update(tenant=tenant, template_id=BALANCED, data={"name": "Ours"})
    assert again.pk == override.pk and again.version == 2


def test_revert_restores_an_earlier_version_as_a_new_one(tenant, make_template):
    make_template(tenant)
    services.template_update(
        tenant=tenant, template_id="custom_terse", data={"name": "Two", "follow_up_count": 5}
    )
    services.template_update(tenant=tenant, template_id="custom_terse", data={"name": "Three"})
    reverted = services.template_revert(tenant=tenant, template_id="custom_terse", version=1)
    assert reverted.version == 4
    assert (reverted.name, reverted.follow_up_count) == ("Custom Terse", 2)
    history = selectors.template_version_list(tenant=tenant, template_id="custom_terse")
    assert [v.snapshot["name"] for v in history] == ["Custom Terse", "Three", "Two", "Custom Terse"]
    with pytest.raises(NotFound):
        services.template_revert(tenant=tenant, template_id="custom_terse", version=9)


def test_revert_of_another_tenants_template_is_not_found(tenant, other_tenant, make_template):
    make_template(other_tenant, template_id="theirs")
    with pytest.raises(NotFound):
        services.template_revert(tenant=tenant, template_id="theirs", version=1)


def test_delete_own_template_and_its_history(tenant, make_template):
    template = make_template(tenant)
    services.template_delete(tenant=tenant, template_id="custom_terse")
    assert not PromptTemplate.objects.filter(pk=template.pk).exists()
    assert not PromptTemplateVersion.objects.filter(template_id=template.pk).exists()


def test_delete_builtin_is_refused(tenant):
    with pytest.raises(PermissionDenied, match="built-in"):
        services.template_delete(tenant=tenant, template_id=BALANCED)
    assert selectors.template_get(tenant=tenant, template_id=BALANCED).is_builtin


def test_deleting_an_override_brings_the_builtin_back(tenant):
    services.template_update(tenant=tenant, template_id=BALANCED, data={"name": "Ours"})
    services.template_delete(tenant=tenant, template_id=BALANCED)
    assert selectors.template_get(tenant=tenant, template_id=BALANCED).is_builtin


def test_delete_another_tenants_template_is_not_found(tenant, other_tenant, make_template):
    theirs = make_template(other_tenant, template_id="theirs")
    with pytest.raises(NotFound):
        services.template_delete(tenant=tenant, template_id="theirs")
    with pytest.raises(NotFound):
        services.template_update(tenant=tenant, template_id="theirs", data={"name": "mine now"})
    theirs.refresh_from_db()
    assert theirs.name == "Custom Terse"


def test_a_template_created_without_follow_up_count_gets_the_setting(tenant, template_data, settings):
    settings.RAG_DEFAULT_FOLLOW_UP_COUNT = 4
    template = services.template_create(tenant=tenant, data=template_data)
    assert template.follow_up_count == 4
    explicit = services.template_create(
        tenant=tenant, data={**template_data, "template_id": "x2", "follow_up_count": 1}
    )
    assert explicit.follow_up_count == 1


def test_create_or_update_creates_updates_and_overrides(tenant, other_tenant, template_data):
    created, was_created = services.template_create_or_update(tenant=tenant, data=template_data)
    assert was_created and created.version == 1

    changed, was_created = services.template_create_or_update(
        tenant=tenant, data={"template_id": "custom_terse", "strictness": "strict"}
    )
    assert not was_created and changed.pk == created.pk
    assert (changed.version, changed.strictness, changed.name) == (2, "strict", "Custom Terse")

    override, was_created = services.template_create_or_update(
        tenant=tenant, data={"template_id": BALANCED, "name": "Ours"}
    )
    assert was_created and override.tenant == tenant and override.version == 1
    assert selectors.template_get(tenant=other_tenant, template_id=BALANCED).is_builtin


def test_create_or_update_never_touches_another_tenants_template(
    tenant, other_tenant, make_template, template_data
):
    theirs = make_template(other_tenant)
    # The other tenant's template is unknown here: this is a create, and it lacks the prompts.
    with pytest.raises(ValidationError):
        services.template_create_or_update(
            tenant=tenant, data={"template_id": "custom_terse", "name": "Mine"}
        )
    mine, was_created = services.template_create_or_update(
        tenant=tenant, data={**template_data, "name": "Mine"}
    )
    assert was_created is True and mine.tenant == tenant and mine.version == 1
    theirs.refresh_from_db()
    assert (theirs.version, theirs.name) == (1, "Custom Terse")


def test_create_or_update_of_a_new_id_validates_like_create(tenant):
    with pytest.raises(ValidationError) as caught:
        services.template_create_or_update(tenant=tenant, data={"template_id": "bare"})
    assert {"name", "system_prompt", "user_prompt"} <= set(caught.value.message_dict)
