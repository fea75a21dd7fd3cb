"""The Celery app. Broker and result backend come from REDIS_URL (via settings); without it,
settings make every task run eagerly in the calling process."""

import os

from celery import Celery
from celery.signals import (
    before_task_publish,
    celeryd_init,
    task_postrun,
    task_prerun,
    worker_process_init,
    worker_process_shutdown,
)

from ragsite import multiprocess_metrics
from ragsite.request_id import get_request_id, reset_request_id, set_request_id

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.local")

app = Celery("ragsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# Tasks sent to the query jobs' queue (questions, and the review tables that ask them); everything
# else goes to the default queue (ingestion, upkeep).
QUERY_TASKS = frozenset({"rag.run_query_job", "rag.run_review_table"})
QUERY_QUEUE_SUFFIX = ".query"


def query_queue() -> str:
    """The query jobs' queue: the default queue's name (one per checkout or deployment, see
    CELERY_TASK_DEFAULT_QUEUE) + ".query" (settings.RAG_QUERY_QUEUE unless the default queue was
    changed at run time, as the tests' worker does)."""
    return f"{app.conf.task_default_queue}{QUERY_QUEUE_SUFFIX}"


def route_task(name, args, kwargs, options, task=None, **_kw):
    """Celery router (CELERY_TASK_ROUTES): query jobs to `query_queue()`, so they never wait
    behind an ingestion in the default queue; None (the default queue) for the rest."""
    return {"queue": query_queue()} if name in QUERY_TASKS else None


def worker_queues(pool: str) -> list[str]:
    """Queues a worker of `pool` consumes: "ingest" the default queue, "query" the query jobs'
    queue, "all" both (one worker for everything, as before the pools were split)."""
    pools = {
        "ingest": [app.conf.task_default_queue],
        "query": [query_queue()],
        "all": [app.conf.task_default_queue, query_queue()],
    }
    return pools[pool]


@app.task(name="ragsite.ping")
def ping() -> str:
    """Round trip through the broker and a worker; used by tests and operators."""
    return "pong"


# Carry the request id of the request that queued a task into the task's log lines.
@before_task_publish.connect
def _attach_request_id(headers=None, **_kwargs):
    if headers is not None and get_request_id():
        headers["lexrag_request_id"] = get_request_id()


@task_prerun.connect
def _bind_request_id(task=None, **_kwargs):
    request_id = getattr(task.request, "lexrag_request_id", None) if task else None
    task.request.lexrag_request_id_token = set_request_id(request_id or f"task_{task.request.id}")


@task_postrun.connect
def _unbind_request_id(task=None, **_kwargs):
    token = getattr(task.request, "lexrag_request_id_token", None) if task else None
    if token is not None:
        reset_request_id(token)


# A worker that answers questions (its queues include the query queue, or it names none and takes
# every queue) loads the query models in each pool process as it starts (rag.warmup), so its first
# question or review-table cell does not wait for them. Set in the main process before the pool
# processes fork.
_answers_questions = False


def answers_questions(queues) -> bool:
    """Whether a worker started with `queues` (its --queues option: a comma-separated string, a
    list, or nothing for every queue) consumes the query jobs' queue."""
    if not queues:
        return True
    names = queues.split(",") if isinstance(queues, str) else list(queues)
    return query_queue() in {name.strip() for name in names}


@celeryd_init.connect
def _note_pool(options=None, **_kwargs):
    global _answers_questions
    _answers_questions = answers_questions((options or {}).get("queues"))


@worker_process_init.connect
def _warm_models(**_kwargs):
    if _answers_questions:
        from rag.warmup import warm_in_background

        warm_in_background()


# A pool process that exits (max tasks per child, a crash) leaves its counts to the shared metrics
# directory, but its live gauges must go (gunicorn's child_exit does the same for web workers).
@worker_process_shutdown.connect
def _mark_metrics_dead(**_kwargs):
    multiprocess_metrics.mark_dead()
