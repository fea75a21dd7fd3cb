"""Query job services: claiming, re-running after a lost worker, giving up, and stale jobs."""

from datetime import timedelta

import pytest
from django.utils import timezone

from rag.models import JobStatus, QueryJob
from rag.queries import selectors, services
from rag.queries.caller import Caller
from ragsite.exceptions import NotFound
from tenants.models import Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def caller(tenant):
    return Caller(tenant=tenant, role=Role.VIEWER, api_key_prefix="abcd1234")


def make_job(caller, **fields):
    job, created = services.query_job_submit(
        caller=caller, question="What is the notice period?", options={}, enqueue=False
    )
    assert created
    QueryJob.objects.filter(pk=job.pk).update(**fields)
    job.refresh_from_db()
    return job


def test_a_job_whose_worker_died_is_run_again(caller, monkeypatch):
    job = make_job(caller, status=JobStatus.RUNNING, attempts=1, started_at=timezone.now())
    monkeypatch.setattr(services, "query_run", lambda **kw: type("Ctx", (), {"result": {"answer": "x"}}))
    finished = services.query_job_run(job_id=job.job_id)
    assert (finished.status, finished.attempts, finished.result) == (JobStatus.SUCCEEDED, 2, {"answer": "x"})


def test_a_job_out_of_attempts_is_failed_not_left_running(caller, settings):
    job = make_job(caller, status=JobStatus.RUNNING, attempts=settings.RAG_QUERY_JOB_MAX_ATTEMPTS)
    finished = services.query_job_run(job_id=job.job_id)
    assert finished.status == JobStatus.FAILED
    assert finished.error["error_type"] == "WorkerLost" and finished.error["status"] == 503


def test_a_finished_job_is_not_run_again(caller, monkeypatch):
    job = make_job(caller, status=JobStatus.SUCCEEDED, result={"answer": "kept"})

    def must_not_run(**kwargs):
        raise AssertionError("ran a finished job")

    monkeypatch.setattr(services, "query_run", must_not_run)
    assert services.query_job_run(job_id=job.job_id).result == {"answer": "kept"}


def test_a_job_running_far_past_its_time_limit_is_failed_when_polled(caller, settings):
    long_ago = timezone.now() - timedelta(seconds=3 * settings.RAG_QUERY_JOB_TIME_LIMIT + 120)
    job = make_job(caller, status=JobStatus.RUNNING, attempts=1, started_at=long_ago)
    assert services.query_job_fail_if_stale(job).status == JobStatus.FAILED
    recent = make_job(caller, status=JobStatus.RUNNING, attempts=1, started_at=timezone.now())
    assert services.query_job_fail_if_stale(recent).status == JobStatus.RUNNING


def test_a_timed_out_job_fails_with_generation_timeout(caller, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    def too_slow(**kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(services, "query_run", too_slow)
    job = make_job(caller)
    finished = services.query_job_run(job_id=job.job_id)
    assert finished.status == JobStatus.FAILED
    assert (finished.error["error_type"], finished.error["status"]) == ("GenerationTimeout", 504)


def test_job_get_is_scoped_to_tenant_and_caller(caller, tenant, other_tenant):
    job = make_job(caller)
    assert selectors.query_job_get(tenant=tenant, job_id=job.job_id, caller=caller) == job
    admin = Caller(tenant=tenant, role=Role.ADMIN, user_id=1)
    assert selectors.query_job_get(tenant=tenant, job_id=job.job_id, caller=admin) == job
    strangers = [
        (tenant, Caller(tenant=tenant, role=Role.MEMBER, api_key_prefix="zzzz9999")),
        (other_tenant, Caller(tenant=other_tenant, role=Role.OWNER, user_id=1)),
    ]
    for scope, stranger in strangers:
        with pytest.raises(NotFound):
            selectors.query_job_get(tenant=scope, job_id=job.job_id, caller=stranger)


def test_history_is_scoped_to_tenant_and_caller(caller, tenant, other_tenant):
    from rag.models import AuditLog

    def audit(tenant, **who):
        return AuditLog.objects.create(
            tenant=tenant, request_id="req_x1234567", query="q", status="answered", latency_ms=1, **who
        )

    mine = audit(tenant, api_key_prefix="abcd1234")
    audit(tenant, api_key_prefix="other999")
    audit(other_tenant, api_key_prefix="abcd1234")
    assert list(selectors.query_history_list(tenant=tenant, caller=caller)) == [mine]
    assert selectors.query_history_get(tenant=tenant, caller=caller, request_id="req_x1234567") == mine
    with pytest.raises(NotFound):
        selectors.query_history_get(tenant=tenant, caller=caller, request_id="req_missing")
