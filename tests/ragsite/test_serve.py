"""`manage.py serve` (what `make run` ends with): web and worker together; Ctrl-C stops both."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import psutil
import pytest
from django.conf import settings

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
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"{url} never answered")


@pytest.mark.integration
@pytest.mark.slow
def test_serve_runs_web_and_worker_and_ctrl_c_stops_both(redis_url, db):
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ragsite.settings.test",
        "EMBEDDED_PG_DATABASE": settings.DATABASES["default"]["NAME"],
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "REDIS_URL": redis_url,
        # Its own queue: the worker must not take tasks of a development server on the same Redis.
        "CELERY_TASK_DEFAULT_QUEUE": f"lexrag-test-serve-{port}",
    }
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert _wait_for_health(f"http://127.0.0.1:{port}/api/v1/health") == 200
        children = psutil.Process(serve.pid).children()
        commands = [" ".join(child.cmdline()) for child in children]
        assert any("runserver" in cmd for cmd in commands), commands
        assert any("celery" in cmd and "worker" in cmd for cmd in commands), commands

        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=60) is not None
        _gone, alive = psutil.wait_procs(children, timeout=30)
        assert alive == [], f"still running after Ctrl-C: {alive}"
    finally:
        if serve.poll() is None:
            serve.kill()
