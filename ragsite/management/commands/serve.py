"""manage.py serve — the web server and two Celery workers together; Ctrl-C stops them all.

The workers are the two pools of `manage.py worker`: ingestion (the default queue) and query jobs
(their own queue), so an async query never waits behind a long ingestion. Without a broker
(REDIS_URL unset) tasks run eagerly inside the web process, so no worker starts.
"""

import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand

from .worker import worker_command


def _interrupt(*_):
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = "Run the development web server and a Celery worker until interrupted."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args, addrport, **options):
        python = sys.executable
        commands = {"web": [python, "manage.py", "runserver", addrport, "--noreload"]}
        if settings.CELERY_BROKER_URL and not settings.CELERY_TASK_ALWAYS_EAGER:
            # The queues this web process sends to (derived from the database unless set).
            commands["ingest worker"] = worker_command("ingest")
            commands["query worker"] = worker_command("query")
        else:
            self.stdout.write("No broker configured: tasks run inside the web process.")
        processes = {name: subprocess.Popen(cmd) for name, cmd in commands.items()}
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            while all(proc.poll() is None for proc in processes.values()):
                time.sleep(0.5)
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
