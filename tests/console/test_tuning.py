"""The console's ranking weights: the firm's admin previews a sample question's ranking under the
current and proposed weights, saves them (versioned, through the service, logged) or resets them,
for the active tenant only; members and viewers cannot reach any of it."""

from __future__ import annotations

import math

import pytest
from django.contrib.admin.models import LogEntry

from rag import services
from rag.ingest import service as ingest
from rag.models import RankingWeights
from rag.retrieval.ranking import Weights
from tenants.models import Role
from tests.factories import MembershipFactory

from .corpus import OLD_TITLE, QUESTION, corpus  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db

LIST = "/manage/rag/rankingweights/"
TUNE = LIST + "tune/"


def _form(similarity, recency, trust, **extra):
    return {
        "similarity_weight": similarity,
        "recency_weight": recency,
        "trust_weight": trust,
        "question": QUESTION,
        "top_k": 5,
        **extra,
    }


def test_the_list_shows_the_effective_weights_and_links_to_the_tune_page(console, tenant):
    page = console.get(LIST).content.decode()
    assert f'href="{TUNE}"' in page and "(the defaults)" in page
    assert 'href="/admin/' not in page
    services.ranking_weights_set(tenant=tenant, similarity_weight=0.5, recency_weight=0.4, trust_weight=0.1)
    page = console.get(LIST).content.decode()
    assert "similarity 0.5000" in page and "(its own weights, version 1)" in page


def test_the_tune_page_is_prefilled_with_the_firms_weights_and_has_no_tenant_field(
    console, tenant, other_tenant
):
    services.ranking_weights_set(tenant=other_tenant, similarity_weight=0, recency_weight=0, trust_weight=1)
    response = console.get(TUNE)
    assert response.status_code == 200
    form = response.context["form"]
    assert "tenant" not in form.fields
    defaults = Weights.from_settings()
    assert (form.initial["similarity_weight"], form.initial["trust_weight"]) == (
        defaults.similarity,
        defaults.trust,
    )
    services.ranking_weights_set(tenant=tenant, similarity_weight=0.5, recency_weight=0.4, trust_weight=0.1)
    form = console.get(TUNE).context["form"]
    assert (form.initial["similarity_weight"], form.initial["recency_weight"]) == (0.5, 0.4)
    assert 'href="/admin/' not in console.get(TUNE).content.decode()


def test_preview_shows_the_changed_order_side_by_side_and_saves_nothing(console, tenant, corpus):  # noqa: F811
    services.ranking_weights_set(tenant=tenant, similarity_weight=0, recency_weight=1, trust_weight=0)

    response = console.post(TUNE, _form(0, 0, 1, _preview="Preview"))

    assert response.status_code == 200, response.context["form"].errors
    preview = response.context["preview"]
    assert preview["current"] == Weights(0.0, 1.0, 0.0) and preview["proposed"] == Weights(0.0, 0.0, 1.0)
    old, new = corpus["old"].pk, corpus["new"].pk
    rows = preview["rows"]
    assert [row["before"].document_id for row in rows] == [new, old]  # never the other firm's
    assert [row["after"].document_id for row in rows] == [old, new]
    assert [(row["change"], row["steps"]) for row in rows] == [("up", 1), ("down", 1)]
    page = response.content.decode()
    assert 'id="ranking-preview"' in page and "▲ 1" in page and "▼ 1" in page
    assert "Old &lt;b&gt;statute&lt;/b&gt; on notice" in page and OLD_TITLE not in page
    assert "globexsecretmarker" not in page
    row = RankingWeights.objects.get(tenant=tenant)
    assert (row.trust_weight, row.version) == (0.0, 1)


def test_preview_under_equal_weights_shows_the_same_order(console, tenant, corpus):  # noqa: F811
    services.ranking_weights_set(tenant=tenant, similarity_weight=0, recency_weight=1, trust_weight=0)
    rows = console.post(TUNE, _form(0, 2, 0, normalize="on", _preview="Preview")).context["preview"]["rows"]
    assert [row["change"] for row in rows] == ["same", "same"]


def test_save_stores_versioned_weights_for_the_active_tenant_only(console, firm_admin, tenant, other_tenant):
    services.ranking_weights_set(tenant=tenant, similarity_weight=0.7, recency_weight=0.2, trust_weight=0.1)
    theirs = services.ranking_weights_set(
        tenant=other_tenant, similarity_weight=1, recency_weight=0, trust_weight=0
    )

    # A forged tenant field is ignored: the form has none, the session says which firm.
    data = _form(6, 3, 1, normalize="on", question="", _save="Save", tenant=other_tenant.pk)
    response = console.post(TUNE, data)

    assert response.status_code == 302 and response.url == LIST
    row = RankingWeights.objects.get(tenant=tenant)
    assert math.isclose(row.similarity_weight, 0.6) and math.isclose(row.trust_weight, 0.1)
    assert (row.version, row.updated_by) == (2, firm_admin)
    assert LogEntry.objects.get(object_id=str(row.pk)).change_message == "Tuned the weights (version 2)."
    untouched = RankingWeights.objects.get(tenant=other_tenant)
    assert (untouched.similarity_weight, untouched.version) == (1.0, theirs.version)


def test_a_first_save_creates_the_firms_row(console, tenant):
    assert console.post(TUNE, _form(1, 0, 0, question="", _save="Save")).status_code == 302
    row = RankingWeights.objects.get(tenant=tenant)
    assert (row.similarity_weight, row.version) == (1.0, 1)


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ((0, 0, 0), "__all__", "At least one ranking weight must be greater than 0."),
        ((0.5, 11, 0.1), "recency_weight", "Ensure this value is less than or equal to 10.0."),
        ((0.5, "nan", 0.1), "recency_weight", "Enter a number."),
    ],
)
@pytest.mark.parametrize("button", ["_save", "_preview"])
def test_invalid_weights_are_refused_and_nothing_is_saved(console, tenant, values, field, message, button):
    response = console.post(TUNE, _form(*values, **{button: "x"}))
    assert response.status_code == 200
    assert message in response.context["form"].errors[field]
    assert response.context["preview"] is None
    assert not RankingWeights.objects.exists()


def test_preview_needs_a_question(console, tenant):
    response = console.post(TUNE, _form(1, 0, 0, question=" ", _preview="Preview"))
    assert response.context["form"].errors["question"] == ["Enter a sample question to preview the ranking."]


def test_reset_puts_the_firm_back_on_the_defaults_as_a_new_version(console, tenant, other_tenant):
    services.ranking_weights_set(tenant=tenant, similarity_weight=0, recency_weight=0, trust_weight=1)
    services.ranking_weights_set(tenant=other_tenant, similarity_weight=0, recency_weight=0, trust_weight=1)
    assert 'name="_reset"' in console.get(TUNE).content.decode()

    assert console.post(TUNE, {"_reset": "Reset"}).status_code == 302

    row = RankingWeights.objects.get(tenant=tenant)
    defaults = Weights.from_settings()
    assert (row.similarity_weight, row.trust_weight, row.version) == (defaults.similarity, defaults.trust, 2)
    assert RankingWeights.objects.get(tenant=other_tenant).trust_weight == 1.0
    assert "Reset the weights to the defaults (version 2)." in LogEntry.objects.get().change_message


def test_reset_without_own_weights_changes_nothing(console, tenant):
    response = console.post(TUNE, {"_reset": "Reset"}, follow=True)
    assert "already ranks with the default weights" in response.content.decode()
    assert not RankingWeights.objects.exists()


def test_the_reset_action_resets_the_firms_row(console, tenant):
    row = services.ranking_weights_set(tenant=tenant, similarity_weight=0, recency_weight=0, trust_weight=1)
    console.post(LIST, {"action": "reset_to_defaults", "_selected_action": [row.pk], "index": 0})
    row.refresh_from_db()
    assert (row.trust_weight, row.version) == (Weights.from_settings().trust, 2)


def test_rows_are_not_edited_outside_the_tune_page(console, tenant):
    row = services.ranking_weights_set(tenant=tenant, similarity_weight=0, recency_weight=0, trust_weight=1)
    url = f"{LIST}{row.pk}/change/"
    assert console.get(url).status_code == 200  # view only
    console.post(url, {"similarity_weight": 1, "recency_weight": 0, "trust_weight": 0})
    assert console.post(f"{LIST}{row.pk}/delete/", {"post": "yes"}).status_code == 403
    row.refresh_from_db()
    assert (row.trust_weight, row.version) == (1.0, 1)


@pytest.mark.parametrize("role", [Role.VIEWER, Role.MEMBER])
def test_members_and_viewers_cannot_tune(client, tenant, role):
    client.force_login(MembershipFactory(tenant=tenant, role=role).user)
    assert client.get(TUNE).status_code == 302  # to the console's login page, which says why
    assert client.post(TUNE, _form(1, 0, 0, question="", _save="Save")).status_code == 302
    assert client.post(TUNE, {"_reset": "Reset"}).status_code == 302
    assert not RankingWeights.objects.exists()


def test_preview_shows_each_passage_with_its_snippet_and_scores(console, tenant, corpus):  # noqa: F811
    """Titles and pages alone made five passages of one document look identical (#36, item 11)."""
    response = console.post(TUNE, _form(1, 0, 0, _preview="Preview"))
    page = response.content.decode()
    assert 'class="passage-snippet">Notice of termination must be given in writing.' in page
    assert 'class="passage-snippet">Notice of termination must be in writing.' in page
    assert "undated" not in page.split('id="ranking-preview"')[1]  # both documents are dated


def test_the_page_says_recency_does_nothing_for_undated_documents(
    console,
    tenant,
    corpus,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    page = console.get(TUNE).content.decode()
    assert "does nothing for undated documents" in page and "0.3 up to 30 days old" in page

    with django_capture_on_commit_callbacks(execute=True):
        ingest.document_upload(
            tenant=tenant,
            case=corpus["old"].case,
            filename="undated.txt",
            content=b"Notice of termination may be given by e-mail.",
            fields=ingest.DocumentFields(title="Undated memo"),
        )
    response = console.post(TUNE, _form(0, 1, 0, _preview="Preview"))
    assert response.context["preview"]["undated"] == 1
    page = response.content.decode()
    assert "1 of the 3 passages below come from documents without a date" in page
    assert "0.00 (undated)" in page


def test_template_pages_say_prompts_change_nothing_with_the_offline_provider(console, tenant, settings):
    from templates_admin.models import PromptTemplate

    builtin = PromptTemplate.objects.filter(tenant__isnull=True).first()
    pages = [f"/manage/templates_admin/prompttemplate/{builtin.pk}/{view}/" for view in ("change", "preview")]
    pages.append("/manage/simulate/")
    settings.RAG_LLM_PROVIDER = "extractive"
    for url in pages:
        assert 'id="offline-provider-note"' in console.get(url).content.decode(), url
    settings.RAG_LLM_PROVIDER = "anthropic"
    for url in pages:
        assert 'id="offline-provider-note"' not in console.get(url).content.decode(), url
