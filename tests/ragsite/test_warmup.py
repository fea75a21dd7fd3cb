"""Processes that answer questions load their models as they start (rag.warmup)."""

import importlib
import os
import subprocess
import sys
import threading
import time

import pytest
from django.conf import settings

from rag import warmup
from rag.ingest import embedding
from rag.retrieval import cross_encoder
from ragsite.celery import answers_questions, app, query_queue

PROJECT_ROOT = settings.BASE_DIR
MODELS = {"embedding", "cross_encoder", "clause_model", "clause_descriptions", "injection_models"}


def test_the_warm_up_loads_every_query_model_and_says_how_long_each_took():
    took = warmup.warm_query_models()
    assert set(took) == MODELS
    assert all(seconds >= 0 for seconds in took.values())
    assert embedding._model is not None
    assert cross_encoder.load(settings.RAG_RERANKER_MODEL) is not None


def test_a_model_that_fails_to_load_is_skipped_and_the_rest_still_load(monkeypatch, caplog):
    def broken():
        raise RuntimeError("no such model")

    monkeypatch.setattr("rag.review.meaning.column_meant_vectors", broken)
    took = warmup.warm_query_models()
    assert "clause_descriptions" not in took
    assert set(took) == MODELS - {"clause_descriptions"}
    assert "warm-up of clause_descriptions failed" in caplog.text


def test_no_thread_starts_when_warming_is_off(settings):
    settings.RAG_WARM_MODELS = False
    assert warmup.warm_in_background() is None


def test_the_web_process_warms_its_models_when_its_wsgi_app_loads(settings):
    settings.RAG_WARM_MODELS = True
    import ragsite.wsgi

    importlib.reload(ragsite.wsgi)
    threads = [t for t in threading.enumerate() if t.name == "lexrag-warm-up"]
    assert threads, "the wsgi module started no warm-up thread"
    for thread in threads:
        thread.join(120)
    assert embedding._model is not None


@pytest.mark.parametrize(
    ("queues", "expected"),
    [
        (None, True),  # no --queues: the worker takes every queue, the query jobs' too
        ("", True),
        ("{query}", True),
        ("{default},{query}", True),
        (["{default}", "{query}"], True),
        ("{default}", False),  # an ingestion worker: its models are the embedding model's only
    ],
)
def test_a_worker_warms_up_only_when_it_takes_the_query_jobs_queue(queues, expected):
    names = {"default": app.conf.task_default_queue, "query": query_queue()}
    if isinstance(queues, str):
        queues = queues.format(**names)
    elif isinstance(queues, list):
        queues = [q.format(**names) for q in queues]
    assert answers_questions(queues) is expected


@pytest.mark.integration
@pytest.mark.slow
def test_a_real_query_worker_loads_the_models_before_any_job(redis_url, tmp_path):
    """A prefork worker of the query pool logs "query models loaded" with no job sent to it."""
    queue = f"lexrag-warm-{os.getpid()}-{time.monotonic_ns()}"
    log = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ragsite.settings.test",
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "REDIS_URL": redis_url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "RAG_WARM_MODELS": "true",
    }
    command = [sys.executable, "-m", "celery", "-A", "ragsite", "worker", "--concurrency=1"]
    command += ["--loglevel=INFO", f"--queues={queue}.query", "--without-gossip", "--without-mingle"]
    with log.open("w") as out:
        proc = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and "query models loaded" not in log.read_text():
            assert proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.5)
        text = log.read_text()
        assert "query models loaded" in text, text[-2000:]
        assert "warm-up of" not in text  # every model loaded
    finally:
        proc.terminate()
        proc.wait(timeout=30)
