"""Two copies of the project on one machine share Redis but never each other's cache entries or
tasks: the cache prefix and the Celery queue default to a name derived from the database, and
`make run PORT=...` serves on that port."""

import json
import os
import subprocess
import sys

import pytest
import redis

from tests.conftest import PROJECT_ROOT

# Read by the settings to name this copy; the tests set them, or leave them out, themselves.
NAMING_VARIABLES = {
    "CACHE_KEY_PREFIX",
    "CELERY_TASK_DEFAULT_QUEUE",
    "DATABASE_URL",
    "EMBEDDED_PG_DATA_DIR",
    "EMBEDDED_PG_DATABASE",
    "VAR_DIR",
}


def _copy_env(**overrides) -> dict:
    """The environment of another copy of the project: local settings, nothing naming it but
    `overrides`."""
    env = {k: v for k, v in os.environ.items() if k not in NAMING_VARIABLES}
    env.update(DJANGO_SETTINGS_MODULE="ragsite.settings.local", CELERY_TASK_ALWAYS_EAGER="false")
    env.update(overrides)
    return env


def _in_copy(code: str, **overrides) -> dict:
    """Run `code` (which sets `out`) after django.setup() in a fresh process; returns `out`."""
    setup = "import django, json; django.setup()\nfrom django.conf import settings\n"
    script = f"{setup}{code}\nprint(json.dumps(out))"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        env=_copy_env(**overrides),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


NAMES = (
    "out = {'queue': settings.CELERY_TASK_DEFAULT_QUEUE, "
    "'prefixes': {alias: c.get('KEY_PREFIX') for alias, c in settings.CACHES.items()}}"
)


def test_two_checkouts_get_their_own_queue_and_cache_prefix(tmp_path, redis_url):
    first = _in_copy(NAMES, VAR_DIR=str(tmp_path / "one"), REDIS_URL=redis_url)
    again = _in_copy(NAMES, VAR_DIR=str(tmp_path / "one"), REDIS_URL=redis_url)
    second = _in_copy(NAMES, VAR_DIR=str(tmp_path / "two"), REDIS_URL=redis_url)
    assert first == again  # stable: the web process and its worker agree
    assert first["queue"] != second["queue"] and first["queue"] != "celery"
    assert first["queue"].startswith("lexrag-lexrag-")  # names the database it serves
    for alias in ("default", "rag"):
        assert first["prefixes"][alias] != second["prefixes"][alias]


def test_two_databases_on_one_server_get_their_own_queue():
    url = "postgres://lexrag:pw@db.internal:5432/{}"
    alpha = _in_copy(NAMES, DATABASE_URL=url.format("alpha"))
    beta = _in_copy(NAMES, DATABASE_URL=url.format("beta"))
    assert alpha["queue"].startswith("lexrag-alpha-") and beta["queue"].startswith("lexrag-beta-")


def test_explicit_prefix_and_queue_still_win(tmp_path, redis_url):
    names = _in_copy(
        NAMES,
        VAR_DIR=str(tmp_path),
        REDIS_URL=redis_url,
        CACHE_KEY_PREFIX="mine",
        CELERY_TASK_DEFAULT_QUEUE="my-queue",
    )
    assert names == {"queue": "my-queue", "prefixes": {"default": "mine", "rag": "mine:rag"}}


def test_one_copys_cache_entries_and_tasks_never_reach_the_other(tmp_path, redis_url):
    one, two = {"VAR_DIR": str(tmp_path / "one")}, {"VAR_DIR": str(tmp_path / "two")}
    send = (
        "from django.core.cache import caches; from ragsite.celery import ping\n"
        "caches['default'].set('who', 'one', 60); caches['rag'].set('answer', 'one', 60)\n"
        "ping.delay()\n"
        "out = settings.CELERY_TASK_DEFAULT_QUEUE"
    )
    read = (
        "from django.core.cache import caches\n"
        "out = [caches['default'].get('who'), caches['rag'].get('answer'),"
        " settings.CELERY_TASK_DEFAULT_QUEUE]"
    )
    client = redis.Redis.from_url(redis_url)
    queue_one = _in_copy(send, REDIS_URL=redis_url, **one)
    try:
        assert _in_copy(read, REDIS_URL=redis_url, **one)[:2] == ["one", "one"]
        who, answer, queue_two = _in_copy(read, REDIS_URL=redis_url, **two)
        assert (who, answer) == (None, None)
        # The task waits in the sending copy's queue; the other copy's workers consume another one.
        assert client.llen(queue_one) == 1 and client.llen(queue_two) == 0
    finally:
        client.delete(queue_one)


@pytest.mark.parametrize(("make_args", "served"), [([], "127.0.0.1:8000"), (["PORT=8100"], "127.0.0.1:8100")])
def test_make_run_serves_on_port(make_args, served):
    plan = subprocess.run(
        ["make", "-n", "run", *make_args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60
    )
    assert plan.returncode == 0, plan.stderr
    serve = [line for line in plan.stdout.splitlines() if "manage.py serve" in line]
    assert serve and serve[-1].endswith(f"manage.py serve --stop-db {served}")
    # The demo credentials it prints point at the same port.
    demo = [line for line in plan.stdout.splitlines() if "manage.py demo_setup" in line]
    assert demo and f"--url http://{served}" in demo[-1]
