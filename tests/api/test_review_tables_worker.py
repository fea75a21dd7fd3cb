"""A review table end to end on the real Redis broker: the API answers at once with the table
queued and its size known, a real Celery worker fills it from the query jobs' queue, and polling
shows the progress reach the total."""

import time

import pytest
from rest_framework.test import APIClient

from ragsite.celery import query_queue, route_task
from tenants import services as tenant_services
from tenants.models import Role
from tests.factories import TenantFactory
from tests.rag.pipeline.conftest import ingest_msa


def test_the_review_job_goes_to_the_query_queue():
    assert route_task("rag.run_review_table", (), {}, {}) == {"queue": query_queue()}


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_review_table_is_filled_by_a_real_worker(celery_worker, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    tenant = TenantFactory(slug="review-worker-firm")
    _, document = ingest_msa(tenant, case_name="Worker matter")
    _, raw_key = tenant_services.api_key_create(
        tenant=tenant, name="worker", role=Role.MEMBER, created_via="test"
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
    columns = [
        {"key": "governing_law"},
        {"key": "insurance"},
        {"question": "How much notice ends the agreement?"},
    ]
    accepted = client.post(
        f"/api/v1/rag/cases/{document.case_id}/review-tables", {"columns": columns}, format="json"
    )
    assert accepted.status_code == 202, accepted.content
    assert accepted.json()["status"] == "queued"  # answered before any work was done
    assert accepted.json()["progress"] == {"done": 0, "total": 3}

    deadline, seen = time.monotonic() + 120, []
    while time.monotonic() < deadline:
        state = client.get(accepted.json()["url"] + "/status").json()
        seen.append((state["status"], state["progress"]["done"]))
        if state["status"] not in ("queued", "running"):
            break
        time.sleep(0.2)
    assert state["status"] == "done", (state, seen)
    assert state["progress"] == {"done": 3, "total": 3}
    dones = [done for _, done in seen]
    assert dones == sorted(dones)  # progress only moves forward
    row = client.get(accepted.json()["url"]).json()["rows"][0]
    assert row["document_id"] == document.pk and all(cell is not None for cell in row["cells"])
    assert "ninety (90) days" in row["cells"][2]["quote"]
