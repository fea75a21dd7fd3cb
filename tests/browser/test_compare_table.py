"""The staff UI shows a comparison as a table (issue #34, item 3): one row per document, the title in
the row's header cell, its quote with the citation marker linked to the cited passage; a title
holding markup is shown as text, never as an element."""

from __future__ import annotations

import pytest

from rag import services as rag_services
from tests.rag.pipeline.conftest import _isolated_answer_cache  # noqa: F401 - autouse: no stale hits
from tests.rag.review.contracts import ingest
from tests.rag.review.test_compare import ALFA_TERMINATION, CONTRACTS, TERMINATION_QUESTION

from .test_staff_ui import NEW_ANSWER, log_in, staff_user  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
MARKUP_TITLE = "Hydraspin <b onmouseover=window.pwned=1>Distribution</b> Agreement"


def test_a_comparison_is_a_table_with_linked_markers(page, live_server, tenant, staff_user, screenshot):  # noqa: F811
    case = rag_services.case_create(tenant=tenant, name="Northwind supply chain")
    ingest(tenant, case, "Alfa Aesar Supply Agreement", CONTRACTS["Alfa Aesar Supply Agreement"])
    ingest(tenant, case, MARKUP_TITLE, CONTRACTS["Hydraspin Distribution Agreement"])
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    log_in(page, live_server, staff_user)
    page.goto(f"{live_server.url}/ask/")
    page.fill("#question", TERMINATION_QUESTION)
    page.click("#ask-button")
    page.wait_for_function(NEW_ANSWER, arg="")
    screenshot("compare-table")

    table = page.locator("#answer table.answer-table")
    assert table.count() == 1
    assert table.locator("thead th").all_inner_texts() == ["Document", "Termination rights"]
    titles = table.locator("tbody th").all_inner_texts()
    assert titles == ["Alfa Aesar Supply Agreement", MARKUP_TITLE]  # the markup shown as text
    assert table.locator("b, img, [onmouseover]").count() == 0
    first = table.locator("tbody tr").first.locator("td")
    assert ALFA_TERMINATION in first.inner_text()
    marker = first.locator("a.marker")
    assert marker.count() == 1
    target = marker.get_attribute("href")
    assert page.locator(f"#answer {target}").count() == 1  # the marker opens its source below
    assert page.locator("#answer img").count() == 0
    assert page.evaluate("window.pwned") is None
    assert not errors, errors
