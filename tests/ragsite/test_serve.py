"""`manage.py serve` (what `make run` ends with): web and two workers (ingestion, query jobs)
together; Ctrl-C stops them all."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import psutil
import pytest
from django.conf import settings

from ragsite.celery import app
from tests.conftest import PROJECT_ROOT


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_health(url: str, timeout: float = 90) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as error:  # it answered (503: unhealthy)
            return error.code
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"{url} never answered")


def _wait_for_line(path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in path.read_text():
            return
        time.sleep(0.5)
    raise AssertionError(f"{text!r} never printed: {path.read_text()!r}")


@pytest.mark.integration
@pytest.mark.slow
def test_serve_runs_web_and_both_worker_pools_and_ctrl_c_stops_them(redis_url, db, tmp_path):
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k != "CELERY_TASK_DEFAULT_QUEUE"},
        "DJANGO_SETTINGS_MODULE": "ragsite.settings.test",
        "EMBEDDED_PG_DATABASE": settings.DATABASES["default"]["NAME"],
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "REDIS_URL": redis_url,
        "RAG_WARM_MODELS": "true",  # as `make run` serves: it says "Ready" once the models are loaded
    }
    # No queue given: the web process sends to the one derived from its database (the test
    # database, so no development server's worker on the same Redis takes these tasks).
    queue = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            "print(settings.CELERY_TASK_DEFAULT_QUEUE)",
        ],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()[-1]
    output = tmp_path / "serve.out"
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=output.open("w"),
        stderr=subprocess.DEVNULL,
    )
    try:
        assert _wait_for_health(f"http://127.0.0.1:{port}/api/v1/health") == 200
        _wait_for_line(output, f"Ready: http://127.0.0.1:{port}/ (models loaded in ")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=5) as response:
            assert json.load(response)["ready"] is True
        children = psutil.Process(serve.pid).children()
        commands = [" ".join(child.cmdline()) for child in children]
        assert any("runserver" in cmd for cmd in commands), commands
        workers = [cmd for cmd in commands if "celery" in cmd and "worker" in cmd]
        # One pool consumes that queue (ingestion), the other its query jobs' queue, and only that.
        assert sorted(cmd.split("--queues=")[1].split()[0] for cmd in workers) == [queue, f"{queue}.query"]
        # One metrics directory for all three, so the web process's /metrics counts the workers' jobs.
        directories = {child.environ().get("PROMETHEUS_MULTIPROC_DIR") for child in children}
        assert len(directories) == 1 and None not in directories, directories
        eager, app.conf.task_always_eager = app.conf.task_always_eager, False
        try:
            for each in (queue, f"{queue}.query"):
                assert app.send_task("ragsite.ping", queue=each).get(timeout=60) == "pong"
        finally:
            app.conf.task_always_eager = eager

        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=60) is not None
        _gone, alive = psutil.wait_procs(children, timeout=30)
        assert alive == [], f"still running after Ctrl-C: {alive}"
    finally:
        if serve.poll() is None:
            serve.kill()


@pytest.mark.integration
@pytest.mark.slow
def test_stop_db_stops_the_embedded_postgres_on_ctrl_c(scratch_pg_dir, tmp_path):
    """`make run` serves with --stop-db: Ctrl-C leaves no PostgreSQL behind."""
    from ragsite.embedded_pg import server

    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "DJANGO_SETTINGS_MODULE": "ragsite.settings.test",
        "EMBEDDED_PG_DATA_DIR": str(scratch_pg_dir),
        "REDIS_URL": "",  # no broker: the web process alone
    }
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--stop-db", f"127.0.0.1:{port}"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=(tmp_path / "serve.out").open("w"),
        stderr=subprocess.STDOUT,
        # Started as a background job of a script would be: with SIGINT ignored, which an exec'd
        # Python keeps (and then never raises KeyboardInterrupt) unless serve restores it.
        preexec_fn=_ignore_sigint,
    )
    try:
        # The scratch server has no tables (unhealthy: 503), which is all this needs.
        assert _wait_for_health(f"http://127.0.0.1:{port}/api/v1/health") in (200, 503)
        assert server.status(scratch_pg_dir).running
        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=90) is not None
        assert not server.status(scratch_pg_dir).running
        assert "Stopped the embedded PostgreSQL" in (tmp_path / "serve.out").read_text()
    finally:
        if serve.poll() is None:
            serve.kill()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
