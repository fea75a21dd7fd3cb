"""Async queries end to end: the API queues a job on the real Redis broker, a real Celery worker
runs it through the pipeline, and polling shows it finish."""

import time

import pytest
from rest_framework.test import APIClient

from tenants import services as tenant_services
from tenants.models import Role
from tests.factories import TenantFactory
from tests.rag.pipeline.conftest import ingest_msa

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def poll(client, url, *, timeout=120):
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        job = client.get(url).json()
        seen.append(job["status"])
        if job["status"] in ("succeeded", "failed"):
            return job, seen
        time.sleep(0.2)
    raise AssertionError(f"job still {seen[-1]} after {timeout}s")


def test_an_async_query_is_run_by_a_real_worker(celery_worker, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    tenant = TenantFactory(slug="worker-firm")
    ingest_msa(tenant, case_name="Worker matter")
    _, raw_key = tenant_services.api_key_create(
        tenant=tenant, name="worker", role=Role.VIEWER, created_via="test"
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")

    accepted = client.post(
        "/api/v1/rag/query",
        {"query": "How much notice is needed to terminate the agreement?", "mode": "async"},
        format="json",
    )
    assert accepted.status_code == 202
    assert accepted.json()["status"] == "queued"  # answered before any work was done
    job, seen = poll(client, accepted.json()["poll_url"])
    assert job["status"] == "succeeded", job["error"]
    assert "ninety (90) days" in job["result"]["answer"]
    assert job["result"]["request_id"] == job["request_id"] == accepted.json()["request_id"]
    assert job["started_at"] and job["finished_at"] and job["attempts"] == 1
    assert seen[0] in ("queued", "running", "succeeded")
