"""Fifteen files dropped at once on a case page, at 1366 px, indexed by a real Celery worker (#36):
every file ends "ready" and none turns red, though the server throttles an upload and a poll
(429 with Retry-After: both are retried). Progress costs one request per tick for the whole batch,
under a per-user budget that polling each file every second would pass within seconds; the
documents list refreshes by itself (no reload) and the document type chosen survives a reload."""

from __future__ import annotations

import json
import re
import time

import pytest

from rag import services as rag_services
from rag.models import Document, DocumentStatus
from tenants.models import Role
from tests.factories import MembershipFactory

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
FILES = 15
THROTTLED = json.dumps({"error_type": "Throttled", "message": "Request was throttled."})


@pytest.fixture
def _media_in_tmp(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"  # before the worker starts: it is given this root


def _files() -> list[dict]:
    """Distinct small agreements (the same bytes twice would be a duplicate, not a new document)."""
    return [
        {
            "name": f"agreement-{n:02}.txt",
            "mimeType": "text/plain",
            "buffer": (
                f"SERVICES AGREEMENT No. {n} between Acme Corp and Vendor {n} LLC.\n\n"
                f"1. Term. This Agreement runs for {n + 1} years.\n\n"
                "2. Governing Law. This Agreement is governed by the laws of the State of New York."
            ).encode(),
        }
        for n in range(FILES)
    ]


def _throttle_first(count: int):
    """A route handler answering its first `count` requests as the throttle would (429, Retry-After
    1 s) and letting the rest through."""
    seen = {"n": 0}

    def handle(route):
        seen["n"] += 1
        if seen["n"] <= count:
            route.fulfill(
                status=429, headers={"Retry-After": "1"}, content_type="application/json", body=THROTTLED
            )
        else:
            route.continue_()

    return handle


def test_fifteen_files_dropped_at_once_all_end_ready(
    _media_in_tmp, celery_worker, page, live_server, tenant, settings
):
    # The budget scaled down: 15 files polled one by one each second pass it in 8 s.
    settings.API_THROTTLE_CLIENT_RATE = "120/min"
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    user.set_password(PASSWORD)
    user.save()
    case = rag_services.case_create(tenant=tenant, name="Vendor agreements")

    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{live_server.url}/accounts/login/?next=/cases/{case.pk}/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/cases/{case.pk}/")
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    api_gets = []
    page.on("request", lambda r: r.method == "GET" and "/api/" in r.url and api_gets.append(r.url))
    upload_url = re.compile(rf"/api/v1/rag/cases/{case.pk}/documents$")
    poll_url = re.compile(rf"/api/v1/rag/cases/{case.pk}/documents\?id=")
    page.route(upload_url, _throttle_first(2))  # uploads are POSTs: the only requests to that URL
    page.route(poll_url, _throttle_first(1))

    page.select_option("#doc-type", "contract")
    page.evaluate("() => { window.notReloaded = true; }")
    started = time.monotonic()
    page.set_input_files("#file-input", _files())
    page.wait_for_function(
        "n => document.querySelectorAll('#uploads li.ready, #uploads li.failed').length === n",
        arg=FILES,
        timeout=240_000,
    )
    elapsed = time.monotonic() - started

    rows = page.locator("#uploads li")
    assert page.locator("#uploads li.failed").count() == 0, rows.all_inner_texts()
    assert page.locator("#uploads li.ready").count() == FILES
    assert all("Ready: " in text for text in rows.all_inner_texts())
    assert page.locator("#uploads-done").is_hidden()  # nothing to explain
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1366  # no sideways scrolling

    # Progress was read for the whole batch at once, about once a second; never file by file.
    assert not [url for url in api_gets if re.search(r"/documents/\d+", url)], api_gets
    polls = [url for url in api_gets if poll_url.search(url)]
    assert 1 < len(polls) <= elapsed + 3, (len(polls), elapsed)
    assert max(url.count("id=") for url in polls) > 1

    # The list refreshed in place: every document, ready, and the page never reloaded.
    ready_rows = "n => document.querySelectorAll('#documents .status-ready').length === n"
    page.wait_for_function(ready_rows, arg=FILES)
    assert page.locator("#documents tbody tr[data-document-id]").count() == FILES
    assert page.evaluate("() => window.notReloaded") is True
    documents = Document.objects.filter(case=case)
    assert documents.count() == FILES
    assert set(documents.values_list("status", "doc_type")) == {(DocumentStatus.READY, "contract")}

    page.reload()
    assert page.locator("#doc-type").input_value() == "contract"
    assert errors == []
