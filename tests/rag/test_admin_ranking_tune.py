"""Django admin: tuning a tenant's ranking weights with a before/after preview of a sample question's
ranking, saved only on request, through the same service (validation, normalization, versions)."""

from __future__ import annotations

import datetime
import math

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from rag import services
from rag.models import DocumentStatus, RankingWeights
from rag.retrieval.ranking import Weights
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TUNE = reverse("admin:rag_rankingweights_tune")
QUESTION = "termination notice"
OLD_TITLE = "Old <b>statute</b> on notice"


@pytest.fixture
def ranked_corpus(case, upload):
    """Two passages about the question: an old statute (trusted, no recency boost) and a recent
    upload (recency boost, little trust). Recency-only weights put the upload first; trust-only
    weights the statute."""

    def ingest(text, filename, **fields):
        document = upload(case, filename, content=text.encode(), filename=filename, **fields).document
        document.refresh_from_db()
        assert document.status == DocumentStatus.READY, document.error_message
        return document

    return {
        "old": ingest(
            "Notice of termination must be in writing.",
            "old.txt",
            title=OLD_TITLE,
            document_date=datetime.date(2001, 1, 1),
            source_type="statute",
        ),
        "new": ingest(
            "Notice of termination must be given in writing.",
            "new.txt",
            title="Recent upload",
            document_date=timezone.localdate() - datetime.timedelta(days=10),
        ),
    }


def _form(tenant, similarity, recency, trust, **extra):
    return {
        "tenant": tenant.pk,
        "similarity_weight": similarity,
        "recency_weight": recency,
        "trust_weight": trust,
        "question": QUESTION,
        "top_k": 5,
        **extra,
    }


def test_clean_validates_and_normalizes_without_writing(tenant):
    weights = services.ranking_weights_clean(
        tenant=tenant, similarity_weight="6", recency_weight=3, trust_weight=1, normalize=True
    )
    assert (weights.similarity, weights.recency, weights.trust) == pytest.approx((0.6, 0.3, 0.1))
    assert not RankingWeights.objects.exists()


def test_the_tune_view_is_linked_and_prefilled_with_the_tenants_weights(admin_client, tenant):
    row = services.ranking_weights_set(
        tenant=tenant, similarity_weight=0.5, recency_weight=0.4, trust_weight=0.1
    )
    changelist = admin_client.get(reverse("admin:rag_rankingweights_changelist")).content.decode()
    assert f'href="{TUNE}"' in changelist
    change = admin_client.get(reverse("admin:rag_rankingweights_change", args=[row.pk])).content.decode()
    assert f'href="{TUNE}?tenant={tenant.pk}"' in change

    form = admin_client.get(TUNE, {"tenant": tenant.pk}).context["form"]
    assert form.initial["tenant"] == tenant
    assert (form.initial["similarity_weight"], form.initial["recency_weight"]) == (0.5, 0.4)
    # Without a tenant (or with a bogus one), the settings' defaults.
    assert admin_client.get(TUNE, {"tenant": "nope"}).context["form"].initial["similarity_weight"] == 0.7


def test_preview_ranks_the_question_under_both_weights_and_saves_nothing(admin_client, tenant, ranked_corpus):
    services.ranking_weights_set(tenant=tenant, similarity_weight=0, recency_weight=1, trust_weight=0)

    response = admin_client.post(TUNE, _form(tenant, 0, 0, 1, _preview="Preview"))

    assert response.status_code == 200
    preview = response.context["preview"]
    assert preview["current"] == Weights(0.0, 1.0, 0.0) and preview["proposed"] == Weights(0.0, 0.0, 1.0)
    old, new = ranked_corpus["old"].pk, ranked_corpus["new"].pk
    rows = preview["rows"]
    assert [row["before"].document_id for row in rows] == [new, old]
    assert [row["after"].document_id for row in rows] == [old, new]
    assert [(row["change"], row["steps"]) for row in rows] == [("up", 1), ("down", 1)]
    assert rows[0]["after"].rank_score == pytest.approx(1.0)  # statute trust, weight 1
    page = response.content.decode()
    assert "Old &lt;b&gt;statute&lt;/b&gt; on notice" in page and OLD_TITLE not in page
    row = RankingWeights.objects.get(tenant=tenant)
    assert (row.trust_weight, row.version) == (0.0, 1)


def test_preview_shows_the_normalized_weights(admin_client, tenant, ranked_corpus):
    response = admin_client.post(TUNE, _form(tenant, 6, 3, 1, normalize="on", _preview="Preview"))
    proposed = response.context["preview"]["proposed"]
    assert (proposed.similarity, proposed.recency, proposed.trust) == pytest.approx((0.6, 0.3, 0.1))
    assert not RankingWeights.objects.exists()


def test_save_stores_the_weights_through_the_service(admin_client, admin_user, tenant):
    services.ranking_weights_set(tenant=tenant, similarity_weight=0.7, recency_weight=0.2, trust_weight=0.1)

    response = admin_client.post(TUNE, _form(tenant, 6, 3, 1, normalize="on", question="", _save="Save"))

    assert response.status_code == 302
    assert response.url == reverse("admin:rag_rankingweights_changelist")
    row = RankingWeights.objects.get(tenant=tenant)
    assert math.isclose(row.similarity_weight, 0.6) and math.isclose(row.trust_weight, 0.1)
    assert (row.version, row.updated_by) == (2, admin_user)
    assert LogEntry.objects.get(object_id=str(row.pk)).change_message == "Tuned the weights (version 2)."


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ((0, 0, 0), "__all__", "At least one ranking weight must be greater than 0."),
        ((0.5, 11, 0.1), "recency_weight", "Ensure this value is less than or equal to 10.0."),
        ((-1, 0.5, 0.1), "similarity_weight", "Ensure this value is greater than or equal to 0.0."),
        ((0.5, "nan", 0.1), "recency_weight", "Enter a number."),
    ],
)
@pytest.mark.parametrize("button", ["_save", "_preview"])
def test_invalid_weights_are_refused_and_nothing_is_saved(
    admin_client, tenant, values, field, message, button
):
    response = admin_client.post(TUNE, _form(tenant, *values, **{button: "x"}))
    assert response.status_code == 200
    assert message in response.context["form"].errors[field]
    assert response.context["preview"] is None
    assert not RankingWeights.objects.exists()


def test_preview_needs_a_question_but_save_does_not(admin_client, tenant):
    response = admin_client.post(TUNE, _form(tenant, 1, 0, 0, question=" ", _preview="Preview"))
    assert response.context["form"].errors["question"] == ["Enter a sample question to preview the ranking."]
    assert admin_client.post(TUNE, _form(tenant, 1, 0, 0, question="", _save="Save")).status_code == 302
    assert RankingWeights.objects.get(tenant=tenant).similarity_weight == 1.0


def _staff(client, *codenames):
    user = UserFactory(is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="rag", codename__in=codenames)
    )
    client.force_login(user)
    return client


def test_tuning_needs_the_change_permission(client, tenant):
    viewer = _staff(client, "view_rankingweights")
    assert viewer.get(TUNE).status_code == 403
    assert viewer.post(TUNE, _form(tenant, 1, 0, 0, _save="Save")).status_code == 403
    assert not RankingWeights.objects.exists()


def test_a_first_save_also_needs_the_add_permission(client, tenant, other_tenant):
    services.ranking_weights_set(tenant=other_tenant, similarity_weight=1, recency_weight=0, trust_weight=0)
    changer = _staff(client, "view_rankingweights", "change_rankingweights")
    assert changer.get(TUNE).status_code == 200
    assert changer.post(TUNE, _form(tenant, 1, 0, 0, _save="Save")).status_code == 403
    assert not RankingWeights.objects.filter(tenant=tenant).exists()
    assert changer.post(TUNE, _form(other_tenant, 0, 1, 0, _save="Save")).status_code == 302
    assert RankingWeights.objects.get(tenant=other_tenant).version == 2


def test_anonymous_users_are_sent_to_the_login_page(client):
    response = client.get(TUNE)
    assert response.status_code == 302 and response.url.startswith(reverse("admin:login"))
