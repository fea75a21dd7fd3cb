"""Running questions for a caller: at once (`query_run`) or as a `QueryJob` a Celery worker runs
(`query_job_submit` → `query_job_run`). Both go through the one pipeline (`run_query`), so jobs get
the same answers, flags, audit rows and metrics as synchronous queries.

An Idempotency-Key makes a submission repeatable: the same key with the same request returns the
job it created the first time (with its result once finished); the same key with a different
request is a `Conflict`. Keys are scoped to the caller, so two users' keys never collide.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Generator
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from rag.pipeline.context import QueryContext
from rag.pipeline.run import reserved_option_errors, run_query, stream_query, validate_query
from ragsite.exceptions import (
    ApplicationError,
    Conflict,
    GenerationTimeout,
    InvalidInput,
    InvalidQuery,
    QueueUnavailable,
    WorkerLost,
)
from ragsite.request_id import get_request_id, new_request_id

from ..models import JobStatus, QueryJob
from . import runners, selectors
from .caller import Caller

logger = logging.getLogger(__name__)

MAX_IDEMPOTENCY_KEY = 255


def _refuse_reserved(options: dict) -> None:
    errors = reserved_option_errors(options)
    if errors:
        raise InvalidQuery("Some query options are not valid.", details=errors)


def query_run(*, caller: Caller, question, options: dict, request_id: str | None = None) -> QueryContext:
    """Answer `question` with the request's `options` now, for `caller` (whose role decides which
    confidential text is read)."""
    _refuse_reserved(options)
    return run_query(question=question, request_id=request_id, **_asked_by(caller), **options)


def query_stream(
    *, caller: Caller, question, options: dict
) -> tuple[QueryContext, Generator[object, None, QueryContext]]:
    """`query_run` with the answer streamed (rag.pipeline.run.stream_query): the context and the
    events to pull. Raises at once what `query_run` raises before the pipeline's first stage."""
    _refuse_reserved(options)
    return stream_query(question=question, **_asked_by(caller), **options)


def _asked_by(caller: Caller) -> dict:
    """The pipeline's arguments naming who asks (tenant, reader, user or API key)."""
    return {
        "tenant": caller.tenant,
        "reader": caller.reader,
        "user_id": caller.user_id,
        "api_key_prefix": caller.api_key_prefix,
    }


def request_fingerprint(*, question, mode: str, options: dict) -> str:
    """sha256 of a query request, independent of key order."""
    body = json.dumps({"query": question, "mode": mode, "options": options}, sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def query_job_submit(
    *,
    caller: Caller,
    question,
    options: dict,
    mode: str = "async",
    idempotency_key: str = "",
    request_id: str | None = None,
    enqueue: bool = True,
) -> tuple[QueryJob, bool]:
    """Create a job for `question` (or find the one this idempotency key created); returns
    (job, created). A new job is queued for a worker unless `enqueue` is False (the caller then
    runs it itself, as a synchronous request with an Idempotency-Key does).

    Raises `InvalidQuery` for a question or options the pipeline would refuse (checked now, so a
    bad request fails at once instead of as a job), `InvalidInput` for a bad key, `Conflict` when the key was
    used for a different request, `QueueUnavailable` when the job cannot be queued.
    """
    if len(idempotency_key) > MAX_IDEMPOTENCY_KEY or not idempotency_key.isprintable():
        raise InvalidInput(
            f"The Idempotency-Key must be printable text of at most {MAX_IDEMPOTENCY_KEY} characters.",
            details={"Idempotency-Key": "Invalid."},
        )
    _refuse_reserved(options)
    validate_query(
        tenant=caller.tenant,
        question=question,
        reader=caller.reader,
        user_id=caller.user_id,
        api_key_prefix=caller.api_key_prefix,
        request_id=request_id,
        **options,
    )
    fingerprint = request_fingerprint(question=question, mode=mode, options=options)
    scoped_key = f"{caller.ident}:{idempotency_key}" if idempotency_key else ""
    if scoped_key:
        existing = selectors.query_job_find_idempotent(tenant=caller.tenant, idempotency_key=scoped_key)
        if existing is not None:
            return _same_request(existing, fingerprint), False
    job = QueryJob(
        tenant=caller.tenant,
        request_id=request_id or get_request_id() or new_request_id(),
        mode=mode,
        question=question if isinstance(question, str) else json.dumps(question, default=str),
        options=options,
        user_id=caller.user_id,
        api_key_prefix=caller.api_key_prefix,
        role=caller.role,
        idempotency_key=scoped_key,
        request_hash=fingerprint,
    )
    try:
        with transaction.atomic():
            job.save()
    except IntegrityError:
        # The same key was submitted concurrently; the other request's job is the job.
        existing = selectors.query_job_find_idempotent(tenant=caller.tenant, idempotency_key=scoped_key)
        if existing is None:
            raise
        return _same_request(existing, fingerprint), False
    if enqueue:
        _enqueue(job)
    return job, True


def _same_request(job: QueryJob, fingerprint: str) -> QueryJob:
    if job.request_hash != fingerprint:
        raise Conflict(
            "This Idempotency-Key was already used for a different request.",
            details={"Idempotency-Key": "Reused with a different body.", "job_id": job.job_id},
        )
    return job


def _enqueue(job: QueryJob) -> None:
    from rag.tasks import run_query_job

    try:
        run_query_job.delay(job.job_id)
    except Exception as exc:
        logger.exception("query job could not be queued", extra={"job_id": job.job_id})
        error = QueueUnavailable()
        _finish(job, JobStatus.FAILED, error=_error_body(error))
        raise error from exc


def query_job_run(*, job_id: str, in_worker: bool = False) -> QueryJob:
    """Run a queued job (or re-run one whose worker died mid-run) through the pipeline and store
    its result or error. A finished job, or one out of attempts, is not run again. `in_worker`:
    this is a Celery worker, which records itself as the job's runner (rag.queries.runners)."""
    job = _claim(job_id)
    if job is None:
        return QueryJob.objects.get(job_id=job_id)
    if in_worker:
        runners.runner_record(job_id=job_id, timeout=query_job_lost_after().total_seconds())
    caller = Caller(tenant=job.tenant, role=job.role, user_id=job.user_id, api_key_prefix=job.api_key_prefix)
    try:
        ctx = query_run(caller=caller, question=job.question, options=job.options, request_id=job.request_id)
    except SoftTimeLimitExceeded:
        limit = settings.RAG_QUERY_JOB_TIME_LIMIT
        error = GenerationTimeout(f"The query did not finish within {limit} seconds.")
        return _finish(job, JobStatus.FAILED, error=_error_body(error))
    except ApplicationError as exc:
        return _finish(job, JobStatus.FAILED, error=_error_body(exc))
    except Exception:
        logger.exception("query job crashed", extra={"job_id": job.job_id})
        error = {"error_type": "InternalError", "message": "An unexpected error occurred.", "details": {}}
        return _finish(job, JobStatus.FAILED, error={**error, "status": 500})
    return _finish(job, JobStatus.SUCCEEDED, result=ctx.result)


def _claim(job_id: str) -> QueryJob | None:
    """Mark the job running (attempt + 1) if it may run; None if it is finished or out of attempts
    (which fails it: its last worker died)."""
    max_attempts = settings.RAG_QUERY_JOB_MAX_ATTEMPTS
    runnable = Q(status=JobStatus.QUEUED) | Q(status=JobStatus.RUNNING, attempts__lt=max_attempts)
    claimed = QueryJob.objects.filter(runnable, job_id=job_id).update(
        status=JobStatus.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now()
    )
    if claimed:
        return QueryJob.objects.select_related("tenant").get(job_id=job_id)
    lost = QueryJob.objects.filter(job_id=job_id, status=JobStatus.RUNNING).first()
    if lost is not None:
        message = f"The worker running this query stopped {lost.attempts} time(s); giving up."
        _finish(lost, JobStatus.FAILED, error=_error_body(WorkerLost(message)))
    return None


def query_job_fail_if_stale(job: QueryJob) -> QueryJob:
    """A job still `running` well past the time limit lost its worker for good: mark it failed,
    so a poller never waits forever."""
    if job.status != JobStatus.RUNNING or job.started_at is None:
        return job
    deadline = job.started_at + timedelta(seconds=2 * settings.RAG_QUERY_JOB_TIME_LIMIT + 60)
    if timezone.now() < deadline:
        return job
    error = WorkerLost("The query's worker stopped responding; submit it again.")
    updated = QueryJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING).update(
        status=JobStatus.FAILED, error=_error_body(error), finished_at=timezone.now()
    )
    if updated:
        job.refresh_from_db()
    return job


def query_job_lost_after() -> timedelta:
    """How long after its run started a `running` job has certainly lost its worker: its hard time
    limit (the soft limit plus the margin) kills any run before then, and the grace covers clocks
    and a slow start."""
    return timedelta(
        seconds=settings.RAG_QUERY_JOB_TIME_LIMIT
        + settings.RAG_QUERY_JOB_HARD_LIMIT_MARGIN_SECONDS
        + settings.RAG_QUERY_JOB_LOST_GRACE_SECONDS
    )


def query_jobs_recover_lost(*, now=None) -> int:
    """Give every job whose worker died mid-run another run if it has attempts left, else fail it
    with `WorkerLost`; returns how many were touched. A `running` job has lost its worker when that
    worker stopped marking itself alive (`runners.runner_lost`), or in any case once it is past
    `query_job_lost_after`. Run by every worker's recovery sweep (rag.tasks), so a killed worker's
    job is retried within seconds instead of when the broker's visibility timeout (an hour) ends.
    Several sweeps at once are safe: each job is taken by one conditional UPDATE."""
    now = now or timezone.now()
    lost_since = now - query_job_lost_after()
    touched = 0
    for job in QueryJob.objects.filter(status=JobStatus.RUNNING):
        if (
            job.started_at is not None
            and job.started_at >= lost_since
            and not runners.runner_lost(job_id=job.job_id)
        ):
            continue  # still within its limits, on a live worker (or one we cannot tell about)
        taken = QueryJob.objects.filter(pk=job.pk, status=JobStatus.RUNNING, started_at=job.started_at)
        if job.attempts >= settings.RAG_QUERY_JOB_MAX_ATTEMPTS:
            message = f"The worker running this query stopped {job.attempts} time(s); giving up."
            error = _error_body(WorkerLost(message))
            touched += taken.update(status=JobStatus.FAILED, error=error, finished_at=now)
            continue
        if not taken.update(status=JobStatus.QUEUED):
            continue
        logger.warning("query job lost its worker: queued again", extra={"job_id": job.job_id})
        touched += 1
        with contextlib.suppress(QueueUnavailable):  # then _enqueue has failed the job
            _enqueue(job)
    return touched


def _finish(job: QueryJob, status: str, *, result: dict | None = None, error: dict | None = None) -> QueryJob:
    job.status = status
    job.result = result
    job.error = error
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "result", "error", "finished_at"])
    return job


def _error_body(error: ApplicationError) -> dict:
    """What a failed job reports: the API's error fields plus the HTTP status it stands for."""
    return {
        "error_type": error.error_type,
        "message": error.message,
        "details": error.details,
        "status": error.status_code,
    }
