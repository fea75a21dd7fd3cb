"""The Django admin console in a real browser: an edited template shows in the simulation's
prompt; proposed ranking weights change the ranking preview."""

from __future__ import annotations

import datetime

import pytest
from django.contrib.auth import get_user_model

from rag import services as rag_services
from rag.ingest import service as ingest
from rag.models import RankingWeights
from templates_admin.models import PromptTemplate

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
OLD = "Indemnity clause. The Supplier shall indemnify the Buyer against all third-party claims."
NEW = "Inspection. The Buyer inspects the goods within ten days; indemnity applies to misuse only."


@pytest.fixture
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def admin_page(page, live_server):
    get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    return page


@pytest.fixture
def corpus(tenant, _media_in_tmp):
    """Two indemnity clauses: one old, one recent, so recency can reorder them."""
    case = rag_services.case_create(tenant=tenant, name="Supply dispute")
    recent = datetime.date.today() - datetime.timedelta(days=10)  # in the youngest recency band
    for name, text, date in [("old.txt", OLD, datetime.date(2001, 1, 1)), ("new.txt", NEW, recent)]:
        ingest.document_upload(
            tenant=tenant,
            case=case,
            filename=name,
            content=text.encode(),
            fields=ingest.DocumentFields(title=name[:-4], document_date=date),
        )
    return case


def test_an_edited_template_shows_in_the_simulation(admin_page, live_server, tenant, corpus, screenshot):
    page = admin_page
    template = PromptTemplate.objects.get(tenant__isnull=True, template_id="legal_analysis_balanced")
    page.goto(f"{live_server.url}/admin/templates_admin/prompttemplate/{template.pk}/change/")
    system = page.locator("#id_system_prompt")
    system.fill(system.input_value() + "\nHOUSE RULE: cite the clause number first.")
    page.check("#id_confirm_builtin_change")  # a built-in changes for every firm: confirmed
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist .success")

    page.goto(f"{live_server.url}/admin/rag/auditlog/simulate/")
    page.select_option("#id_tenant", str(tenant.pk))
    page.fill("#id_question", "Who must indemnify whom?")
    page.select_option("#id_template_id", "legal_analysis_balanced")
    page.fill("#id_top_k", "2")
    page.click("input[value=Simulate]")
    page.wait_for_selector("#simulation-system")
    assert "HOUSE RULE: cite the clause number first." in page.locator("#simulation-system").inner_text()
    assert "indemnify" in page.locator("#simulation-user").inner_text()
    screenshot("admin-simulation")


def test_proposed_weights_change_the_ranking_preview(admin_page, live_server, tenant, corpus, screenshot):
    page = admin_page
    page.goto(f"{live_server.url}/admin/rag/rankingweights/tune/?tenant={tenant.pk}")

    def preview(similarity: str, recency: str) -> list[str]:
        page.select_option("#id_tenant", str(tenant.pk))
        page.fill("#id_similarity_weight", similarity)
        page.fill("#id_recency_weight", recency)
        page.fill("#id_trust_weight", "0")
        page.fill("#id_question", "Who shall indemnify the Buyer against third-party claims?")
        page.click("input[name=_preview]")
        page.wait_for_selector("#ranking-preview .ranking-row")
        return page.locator("#ranking-preview .after-title").all_inner_texts()

    by_similarity = preview("1", "0")
    moved_by_similarity = page.locator("#ranking-preview .change").all_inner_texts()
    by_recency = preview("0", "1")
    moved_by_recency = page.locator("#ranking-preview .change").all_inner_texts()
    assert by_similarity[0] == "old"  # the closer wording wins on similarity alone
    assert by_recency[0] == "new"  # the recent clause first once only recency counts
    # Against the current weights, one of the two proposals moves a passage (which one depends on
    # where the current blend puts them), and the preview marks it.
    unchanged = ["="] * len(by_recency)
    assert moved_by_similarity != unchanged or moved_by_recency != unchanged
    screenshot("admin-ranking-preview")
    assert not RankingWeights.objects.filter(tenant=tenant).exists()  # a preview saves nothing
