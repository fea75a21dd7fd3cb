"""The query path's one-round-trip snapshot: versions, and which template an id resolves to."""

import pytest

from rag import selectors
from rag import services as rag_services
from ragsite.exceptions import NotFound
from templates_admin import selectors as template_selectors
from templates_admin import services as template_services
from templates_admin.models import PromptTemplate

pytestmark = pytest.mark.django_db

BALANCED = "legal_analysis_balanced"


def own_template(tenant, template_id, prompt="{context}\n{question}"):
    return template_services.template_create(
        tenant=tenant,
        data={"template_id": template_id, "name": template_id, "system_prompt": "S", "user_prompt": prompt},
    )


def test_a_new_tenant_has_zero_versions_and_sees_the_builtin(tenant):
    snapshot = selectors.query_snapshot_get(tenant=tenant, template_id=BALANCED)
    builtin = PromptTemplate.objects.get(tenant__isnull=True, template_id=BALANCED)
    assert (snapshot.index_version, snapshot.indexed_at, snapshot.weights_version) == (0, None, 0)
    assert (snapshot.template_pk, snapshot.template_version) == (builtin.pk, builtin.version)


def test_the_tenants_own_template_shadows_the_builtin_and_others_are_invisible(tenant, other_tenant):
    override = own_template(tenant, BALANCED)
    foreign = own_template(other_tenant, "globex_only")
    assert selectors.query_snapshot_get(tenant=tenant, template_id=BALANCED).template_pk == override.pk
    assert selectors.query_snapshot_get(tenant=tenant, template_id="globex_only").template_pk is None
    assert (
        selectors.query_snapshot_get(tenant=other_tenant, template_id="globex_only").template_pk == foreign.pk
    )


def test_weights_versions_are_per_tenant(tenant, other_tenant):
    rag_services.ranking_weights_set(tenant=tenant, similarity_weight=1, recency_weight=0, trust_weight=0)
    assert selectors.query_snapshot_get(tenant=tenant, template_id=BALANCED).weights_version == 1
    assert selectors.query_snapshot_get(tenant=other_tenant, template_id=BALANCED).weights_version == 0


def test_a_template_is_read_again_once_its_version_changes(tenant):
    template = own_template(tenant, "memo_style")
    first = template_selectors.template_get_by_version(pk=template.pk, version=template.version)
    assert template_selectors.template_get_by_version(pk=template.pk, version=template.version) is first
    changed = template_services.template_update(
        tenant=tenant, template_id="memo_style", data={"system_prompt": "NEW SYSTEM PROMPT"}
    )
    fresh = template_selectors.template_get_by_version(pk=changed.pk, version=changed.version)
    assert fresh.system_prompt == "NEW SYSTEM PROMPT"
    with pytest.raises(NotFound):  # an outdated version is not served from the database either
        template_selectors.template_get_by_version(pk=template.pk, version=template.version + 5)
