"""GET /admin/metrics: the rag_* Prometheus metrics of one tenant. Another tenant's slug and its
custom template ids never appear; shared provider/model series do; admins only."""

from __future__ import annotations

import uuid

import pytest
from prometheus_client import Counter, values
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Sample

from rag.pipeline import metrics
from tests.api.conftest_admin import ROLES_BELOW_ADMIN

METRICS = "/api/v1/rag/admin/metrics"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TEMPLATE = "/api/v1/rag/admin/templates"


# --- the filter (pure) ----------------------------------------------------------------------------

VISIBLE = {"acme_house"}  # the tenant's own templates


@pytest.mark.parametrize(
    ("labels", "shown"),
    [
        ({"tenant": "acme-law", "template": "acme_house", "status": "answered"}, True),
        ({"tenant": "acme-law", "template": "globex_secret"}, True),  # its own series, whatever the id
        ({"tenant": "globex-legal", "template": "legal_analysis_balanced"}, False),
        ({"tenant": "globex-legal"}, False),
        ({"tenant": ""}, False),
        # A built-in's series counts every firm's queries: platform-wide, the operator's only.
        ({"template": "legal_analysis_balanced", "le": "1.0"}, False),
        ({"template": "acme_house"}, True),
        ({"template": "unknown"}, False),
        ({"template": "globex_secret"}, False),
        ({"template": ""}, False),
        ({"provider": "anthropic", "model": "claude"}, False),
        ({}, False),
    ],
)
def test_sample_visible(labels, shown):
    assert metrics.sample_visible(labels, tenant_slug="acme-law", template_ids=VISIBLE) is shown


def _family(name: str, *label_sets: dict):
    family = Metric(name, f"{name} help", "counter")
    family.samples = [Sample(f"{name}_total", labels, 1.0) for labels in label_sets]
    return family


def test_tenant_view_keeps_only_rag_families_and_visible_samples():
    families = [
        _family("rag_queries", {"tenant": "acme-law"}, {"tenant": "globex-legal"}),
        _family("rag_citations_per_response", {"template": "globex_secret"}, {"template": "acme_house"}),
        _family("rag_model_calls", {"provider": "extractive", "model": "m"}),
        _family("django_http_requests", {}),
        _family("python_gc_objects_collected", {"generation": "0"}),
    ]
    view = metrics.tenant_view(families, tenant_slug="acme-law", template_ids=VISIBLE)
    assert [family.name for family in view] == [
        "rag_queries",
        "rag_citations_per_response",
        "rag_model_calls",
    ]
    assert [[s.labels for s in family.samples] for family in view] == [
        [{"tenant": "acme-law"}],
        [{"template": "acme_house"}],
        [],  # platform-wide: the operator's /metrics only
    ]
    # The input is not changed.
    assert len(families[0].samples) == 2


def test_tenant_view_of_nothing_is_nothing():
    assert metrics.tenant_view([], tenant_slug="acme-law", template_ids=set()) == []


# --- the endpoint ---------------------------------------------------------------------------------


def _create_template(client, template_id: str) -> None:
    body = {
        "template_id": template_id,
        "name": template_id,
        "system_prompt": "s",
        "user_prompt": "{context}{question}",
    }
    assert client.post(TEMPLATE, body, format="json").status_code == 201


@pytest.mark.django_db
def test_another_tenants_slug_and_custom_templates_never_appear(admin_client, other_admin_client, tenant):
    suffix = uuid.uuid4().hex[:8]  # series of earlier tests in this process stay in the registry
    mine, theirs = f"acme_own_{suffix}", f"globex_secret_{suffix}"
    _create_template(admin_client, mine)
    _create_template(other_admin_client, theirs)
    metrics.QUERIES.labels("acme-law", mine, "answered").inc()
    metrics.QUERIES.labels("globex-legal", theirs, "answered").inc()
    metrics.QUERIES.labels("globex-legal", "legal_analysis_balanced", "dry_run").inc()
    metrics.CACHE_HITS.labels("globex-legal").inc()
    metrics.HALLUCINATIONS.labels("globex-legal").inc()
    metrics.CITATIONS.labels(mine).observe(2)
    metrics.CITATIONS.labels(theirs).observe(3)
    metrics.CONFIDENCE.labels(theirs).observe(0.9)
    metrics.CONFIDENCE.labels("legal_analysis_terse").observe(0.8)
    metrics.MODEL_CALLS.labels("fake", f"fake-{suffix}").inc()

    response = admin_client.get(METRICS)
    assert response.status_code == 200
    assert response["Content-Type"] == CONTENT_TYPE
    text = response.content.decode()

    assert "globex" not in text and theirs not in text
    assert f'rag_queries_total{{status="answered",template="{mine}",tenant="acme-law"}} 1.0' in text
    assert f'rag_citations_per_response_count{{template="{mine}"}} 1.0' in text
    # Series counting every firm's queries (a built-in template's, a provider's) are not a firm's.
    assert 'rag_confidence_score_count{template="legal_analysis_terse"}' not in text
    assert f"fake-{suffix}" not in text
    # Only the spec's rag_* metrics: no Django, process or Python series.
    names = {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and line[0] != "#"}
    assert names and all(name.startswith("rag_") for name in names)
    assert "# TYPE rag_queries_total counter" in text

    # The other tenant sees its own, and not ours.
    theirs_text = other_admin_client.get(METRICS).content.decode()
    assert theirs in theirs_text and mine not in theirs_text and "acme-law" not in theirs_text


@pytest.mark.django_db
def test_a_deleted_template_is_no_longer_the_tenants(admin_client, other_admin_client):
    suffix = uuid.uuid4().hex[:8]
    template_id = f"short_lived_{suffix}"
    _create_template(other_admin_client, template_id)
    metrics.CITATIONS.labels(template_id).observe(1)
    assert template_id in other_admin_client.get(METRICS).content.decode()
    assert other_admin_client.delete(f"{TEMPLATE}/{template_id}").status_code == 204
    assert template_id not in other_admin_client.get(METRICS).content.decode()
    assert template_id not in admin_client.get(METRICS).content.decode()


@pytest.mark.django_db
def test_a_prometheus_scraper_accept_header_is_served(admin_client):
    accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
    for header in ("text/plain", accept):
        response = admin_client.get(METRICS, HTTP_ACCEPT=header)
        assert response.status_code == 200 and response["Content-Type"] == CONTENT_TYPE


@pytest.mark.django_db
def test_multiprocess_mode_reads_every_workers_files(admin_client, monkeypatch, tmp_path):
    """With PROMETHEUS_MULTIPROC_DIR set the endpoint reads the workers' files (not this process's
    registry), and filters them the same way."""
    metrics.MODEL_CALLS.labels("in-process-only", "m").inc()  # this process's registry: not read below
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    monkeypatch.setattr(values, "ValueClass", values.MultiProcessValue(process_identifier=lambda: 4242))
    worker_queries = Counter(
        "rag_queries", "Queries answered, by outcome.", ["tenant", "template", "status"], registry=None
    )
    worker_queries.labels("acme-law", "legal_analysis_balanced", "answered").inc(7)
    worker_queries.labels("globex-legal", "legal_analysis_balanced", "answered").inc(5)

    text = admin_client.get(METRICS).content.decode()
    assert (
        'rag_queries_total{status="answered",template="legal_analysis_balanced",tenant="acme-law"} 7.0'
        in text
    )
    assert "globex" not in text
    assert "in-process-only" not in text


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES_BELOW_ADMIN)
@pytest.mark.parametrize("accept", ["application/json", "text/plain"])
def test_below_admin_is_forbidden_with_a_json_error(tenant, make_key_client, role, accept):
    response = make_key_client(tenant, role).get(METRICS, HTTP_ACCEPT=accept)
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    assert response.json()["error_type"] == "PermissionDenied"


@pytest.mark.django_db
def test_anonymous_is_401_with_a_json_error(api_client):
    response = api_client.get(METRICS, HTTP_ACCEPT="text/plain")
    assert response.status_code == 401 and response.json()["error_type"] == "NotAuthenticated"
