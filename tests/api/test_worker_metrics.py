"""Prometheus multi-process mode end to end: a real Celery worker runs an async query job, and the
web process's metrics (the operator's /metrics and the tenant's admin/metrics) count it."""

import time

import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from ragsite import multiprocess_metrics
from tenants import services as tenant_services
from tenants.models import Role
from tests.api.test_query_jobs_worker import poll
from tests.factories import TenantFactory
from tests.rag.pipeline.conftest import ingest_msa

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

TOKEN = "operator-token"


@pytest.fixture
def metrics_dir(monkeypatch, tmp_path):
    """A shared metrics directory, set before the worker starts (it inherits the environment)."""
    directory = tmp_path / "prometheus"
    monkeypatch.setenv(multiprocess_metrics.ENV, str(directory))
    return directory


def queries_counted(text: str, tenant: str) -> float:
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "rag_queries_total" and sample.labels.get("tenant") == tenant
    )


def key_client(tenant, role) -> APIClient:
    _, raw_key = tenant_services.api_key_create(tenant=tenant, name=role, created_via="test", role=role)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
    return client


# metrics_dir first: the worker must start with the directory in its environment.
def test_an_async_jobs_count_is_in_the_web_processs_metrics(metrics_dir, celery_worker, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.METRICS_TOKEN = TOKEN
    tenant = TenantFactory(slug="metrics-firm")
    ingest_msa(tenant, case_name="Metrics matter")
    viewer, admin = key_client(tenant, Role.VIEWER), key_client(tenant, Role.ADMIN)

    accepted = viewer.post(
        "/api/v1/rag/query",
        {"query": "How much notice is needed to terminate the agreement?", "mode": "async"},
        format="json",
    )
    assert accepted.status_code == 202
    job, _ = poll(viewer, accepted.json()["poll_url"])
    assert job["status"] == "succeeded", job["error"]

    # The worker wrote its counts as it finished the job; the web process reads them.
    deadline = time.monotonic() + 10
    while True:
        tenant_view = admin.get("/api/v1/rag/admin/metrics", HTTP_ACCEPT="text/plain").content.decode()
        if queries_counted(tenant_view, tenant.slug) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert queries_counted(tenant_view, tenant.slug) == 1
    operator_view = APIClient().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    assert queries_counted(operator_view, tenant.slug) == 1
    # Counted by the worker, not by this (web) process.
    assert not any(
        metric.name == "rag_queries" and sample.labels.get("tenant") == tenant.slug
        for metric in REGISTRY.collect()
        for sample in metric.samples
    )
    # Its files are named by host and pid: containers sharing the directory number pids alike.
    worker = multiprocess_metrics.process_identifier(celery_worker.pid)  # --pool=solo: one process
    assert (metrics_dir / f"counter_{worker}.db").is_file()
