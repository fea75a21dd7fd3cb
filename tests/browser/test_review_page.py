"""The review page in a real browser at 1366 px: pick built-in columns and a typed question, start
the table, see it filled (documents down the side, columns across, each cell its answer, quote,
passage link and confidence), open a cell's passage, download the CSV; a table still queued shows
its progress and fills in by itself once its job runs."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from rag import services as rag_services
from rag.queries.caller import Caller
from rag.review.tables import fill, services
from tenants.models import Role
from tests.factories import MembershipFactory
from tests.rag.pipeline.conftest import _isolated_answer_cache  # noqa: F401 - autouse: no stale hits
from tests.rag.review.contracts import ingest

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
CONTRACTS = {
    "Alpha Distribution Agreement": (
        "DISTRIBUTION AGREEMENT between Alpha Foods Inc and Northwind LLC.\n\n"
        "2. Payment. Invoices are payable within thirty (30) days of receipt.\n\n"
        "9. Insurance. Distributor shall maintain commercial general liability insurance of $2,000,000.\n\n"
        "15. Governing Law. This Agreement shall be governed by the laws of the State of Delaware."
    ),
    "Beta Supply Agreement": (
        "SUPPLY AGREEMENT between Beta Metals Corp and Contoso Ltd.\n\n"
        "2. Payment. Invoices are payable within sixty (60) days of receipt.\n\n"
        "15. Governing Law. This Agreement shall be governed by the laws of the State of New York."
    ),
}


@pytest.fixture
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def matter(tenant, _media_in_tmp):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    user.set_password(PASSWORD)
    user.save()
    case = rag_services.case_create(tenant=tenant, name="Northwind diligence")
    for title, text in CONTRACTS.items():
        ingest(tenant, case, title, text)
    return user, case


def log_in(page, live_server, user) -> None:
    page.goto(f"{live_server.url}/cases/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/cases/")


def test_pick_columns_start_read_the_table_and_download_it(page, live_server, matter, screenshot):
    user, case = matter
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, user)
    page.goto(f"{live_server.url}/cases/{case.pk}/")
    page.click("text=Review")
    page.wait_for_url(f"{live_server.url}/cases/{case.pk}/review/")
    page.check('input[name=column][value="governing_law"]')
    page.check('input[name=column][value="insurance"]')
    page.fill("#questions", "When are invoices payable?")
    page.fill("#table-name", "Diligence")
    page.click("#start-review")
    page.wait_for_url(re.compile(r"/review/\d+/$"))
    page.wait_for_selector("#review-table tbody tr[data-document-id]")
    page.wait_for_function("document.querySelector('#table-status').textContent.trim() === 'Done'")
    screenshot("review-table")

    headers = page.locator("#review-table thead th").all_inner_texts()
    assert headers == ["Document", "Insurance", "Governing Law", "When are invoices payable?"]  # page order
    rows = page.locator("#review-table tbody tr")
    assert rows.count() == 2
    titles = page.locator("#review-table tbody th").all_inner_texts()
    assert sorted(title.strip() for title in titles) == sorted(CONTRACTS)
    assert page.locator("#review-table td.cell").count() == 6
    assert page.locator("#table-count").inner_text() == "6 of 6 cells"
    law = page.locator('#review-table td[data-column="governing_law"]')
    assert any("Delaware" in text for text in law.all_inner_texts())
    assert page.locator('#review-table td[data-column="insurance"] .answer').all_inner_texts()[0] in (
        "Yes",
        "No",
    )
    assert page.locator("#review-table .confidence").count() >= 4

    # The page itself never scrolls sideways at 1366 px: a wide table scrolls inside its box.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366

    with page.expect_download() as download:
        page.click("text=Download CSV")
    lines = list(csv.reader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert lines[0][2] == "Insurance" and len(lines) == 3

    law.locator("a.passage").first.click()
    page.wait_for_url(re.compile(r"/documents/\d+/\?start=\d+&end=\d+"))
    assert "governed by the laws of the State" in page.locator("mark").first.inner_text()
    assert not errors, errors


def test_a_queued_table_shows_its_progress_and_fills_in_by_itself(page, live_server, matter, tenant):
    user, case = matter
    caller = Caller(tenant=tenant, role=Role.MEMBER, user_id=user.pk)
    table = services.review_table_create(
        caller=caller, case_id=case.pk, columns=[{"key": "governing_law"}], enqueue=False
    )
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, user)
    page.goto(f"{live_server.url}/review/{table.pk}/")
    assert page.locator("#table-status").inner_text() == "Queued"
    assert page.locator("#table-count").inner_text() == "0 of 2 cells"
    assert page.locator("#cancel-table").is_visible() and not page.locator("#rerun-table").is_visible()

    fill.table_fill(table_id=table.pk, run=table.run)  # the worker's job, here
    page.wait_for_selector("#review-table tbody tr[data-document-id]")
    assert page.locator("#table-status").inner_text() == "Done"
    assert page.locator("#review-table td.cell").count() == 2
    assert page.locator("#rerun-table").is_visible()


def test_a_lawyer_reviews_a_cell_and_the_table_shows_their_answer(page, live_server, matter, tenant):
    user, case = matter
    caller = Caller(tenant=tenant, role=Role.MEMBER, user_id=user.pk)
    table = services.review_table_create(
        caller=caller, case_id=case.pk, columns=[{"key": "insurance"}], enqueue=False
    )
    fill.table_fill(table_id=table.pk, run=table.run)
    page.set_viewport_size({"width": 1366, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, user)
    page.goto(f"{live_server.url}/review/{table.pk}/")
    beta = page.locator("#review-table tr", has_text="Beta Supply Agreement").locator("td.cell")
    machine = beta.locator(".answer").inner_text()

    beta.locator("button.review-cell").click()
    beta.locator("input[name=answer]").fill("No")
    beta.locator("textarea[name=note]").fill("No insurance clause; checked the schedules too.")
    beta.locator("button[type=submit]").click()
    page.wait_for_selector("#review-table td.reviewed")
    beta = page.locator("#review-table tr", has_text="Beta Supply Agreement").locator("td.cell")
    assert beta.locator(".answer").inner_text() == "No"
    assert f"Reviewed by {user.username}" in beta.locator(".review-by").inner_text()
    assert f"the table said: {machine}" in beta.locator(".review-by").inner_text()
    assert beta.locator(".review-note").inner_text() == "No insurance clause; checked the schedules too."
    assert beta.locator("button.review-cell").inner_text() == "Edit review"

    beta.locator("button.review-cell").click()  # take it back: the machine's answer shows again
    beta.locator('[data-action="unreview"]').click()
    page.locator("#review-table td.reviewed").wait_for(state="detached")
    beta = page.locator("#review-table tr", has_text="Beta Supply Agreement").locator("td.cell")
    assert beta.locator(".answer").inner_text() == machine
    assert not errors, errors
