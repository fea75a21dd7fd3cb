"""Shared start-up of the benchmark scripts."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def setup_django() -> None:
    """Configure Django the way manage.py does, from the repository root, never touching the hub."""
    sys.path.insert(0, str(REPO_ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.local")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # DEBUG would log every SQL statement in the connection: not what production pays.
    os.environ.setdefault("DEBUG", "false")
    import django

    django.setup()


def serve(env: dict, *, port: int, workers: int, threads: int) -> subprocess.Popen:
    """gunicorn with the production config on 127.0.0.1:`port`, once its health check answers 200.
    The caller terminates it."""
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--config=python:ragsite.gunicorn_conf",
        "ragsite.wsgi:application",
        f"--workers={workers}",
        f"--threads={threads}",
        f"--bind=127.0.0.1:{port}",
        "--keep-alive=30",
        "--log-level=warning",
    ]
    server = subprocess.Popen(command, cwd=REPO_ROOT, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=5) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise SystemExit("gunicorn did not become healthy")
