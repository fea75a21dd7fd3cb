"""manage.py serve — the web server and two Celery workers together; Ctrl-C stops them all.

The workers are the two pools of `manage.py worker`: ingestion (the default queue) and query jobs
(their own queue), so an async query never waits behind a long ingestion. Without a broker
(REDIS_URL unset) tasks run eagerly inside the web process, so no worker starts.

Their metrics go to one directory (PROMETHEUS_MULTIPROC_DIR, var/prometheus unless set), so the web
process's /metrics and admin/metrics count the workers' async query jobs too.

It says "Ready" once the web process has loaded the models a question needs (the health check's
`ready`), and with `--stop-db` (what `make run` uses) stops the embedded PostgreSQL on the way out.
This is the development server; production serving is in docs/deployment.md.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

from django.conf import settings
from django.core.management.base import BaseCommand

from ragsite import multiprocess_metrics
from ragsite.embedded_pg import server

from .worker import worker_command

READY_WAIT_SECONDS = 300


def _interrupt(*_):
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = "Run the development web server and a Celery worker until interrupted."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument(
            "--stop-db",
            action="store_true",
            help="stop the embedded PostgreSQL when the server stops (not with DATABASE_URL)",
        )

    def handle(self, *args, addrport, stop_db=False, **options):
        python = sys.executable
        commands = {"web": [python, "manage.py", "runserver", addrport, "--noreload"]}
        if settings.CELERY_BROKER_URL and not settings.CELERY_TASK_ALWAYS_EAGER:
            # The queues this web process sends to (derived from the database unless set).
            commands["ingest worker"] = worker_command("ingest")
            commands["query worker"] = worker_command("query")
        else:
            self.stdout.write("No broker configured: tasks run inside the web process.")
        # Set before the processes start: each reads it as it starts (ragsite.multiprocess_metrics).
        os.environ.setdefault(multiprocess_metrics.ENV, str(settings.VAR_DIR / "prometheus"))
        multiprocess_metrics.remove_dead_files()  # the previous run's counts
        processes = {name: subprocess.Popen(cmd) for name, cmd in commands.items()}
        signal.signal(signal.SIGTERM, _interrupt)
        # Ctrl-C stops it even when it was started with SIGINT ignored (a background job of a
        # non-interactive shell inherits that, and Python then never raises KeyboardInterrupt).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Thread(target=self._say_when_ready, args=(addrport,), daemon=True).start()
        try:
            while all(proc.poll() is None for proc in processes.values()):
                time.sleep(1)
            exited = [name for name, proc in processes.items() if proc.poll() is not None]
            self.stderr.write(f"{', '.join(exited)} exited; stopping the rest.")
        except KeyboardInterrupt:
            self.stdout.write("Stopping…")
        finally:
            for proc in processes.values():
                if proc.poll() is None:
                    proc.terminate()
            for proc in processes.values():
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
            if stop_db and not settings.DATABASE_URL and server.stop(settings.EMBEDDED_PG_DATA_DIR):
                self.stdout.write("Stopped the embedded PostgreSQL (`manage.py db start` starts it).")

    def _say_when_ready(self, addrport: str) -> None:
        """Print the address once the health check says the models are loaded: a question asked
        before then waits for them."""
        host, _, port = addrport.rpartition(":")
        host = "127.0.0.1" if host in ("", "0.0.0.0", "[::]") else host  # noqa: S104 (a reply address)
        url = f"http://{host}:{port}/api/v1/health"
        deadline = time.monotonic() + READY_WAIT_SECONDS
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    report = json.load(response)
            except (OSError, ValueError):
                report = {}
            if report.get("ready"):
                seconds = (report.get("models") or {}).get("seconds")
                took = f" (models loaded in {seconds:.1f} s)" if seconds is not None else ""
                self.stdout.write(f"Ready: http://{host}:{port}/{took}")
                return
            time.sleep(1)
