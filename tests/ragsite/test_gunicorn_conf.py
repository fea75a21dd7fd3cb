"""The production gunicorn settings: Prometheus multi-process housekeeping, a frozen start-up heap."""

import os
import subprocess
import sys

from ragsite import gunicorn_conf
from ragsite.multiprocess_metrics import process_identifier


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_starting_removes_an_earlier_runs_files_and_keeps_live_processes(tmp_path, monkeypatch):
    directory = tmp_path / "prometheus"
    directory.mkdir()
    dead, alive = process_identifier(_dead_pid()), process_identifier(os.getppid())
    old = [f"counter_{dead}.db", f"histogram_{dead}.db", f"counter_{_dead_pid()}.db"]  # last: pid-only name
    # A Celery worker still running on this host; another container's process on a shared volume.
    kept = [f"counter_{alive}.db", "counter_other-host-1.db"]
    for name in old + kept:
        (directory / name).write_bytes(b"x")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))
    gunicorn_conf.on_starting(server=None)
    assert sorted(os.listdir(directory)) == sorted(kept)


def test_starting_creates_the_metrics_directory(tmp_path, monkeypatch):
    directory = tmp_path / "prometheus"
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))
    gunicorn_conf.on_starting(server=None)
    assert directory.is_dir()


def test_a_dead_workers_live_gauge_files_are_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    (tmp_path / f"gauge_livesum_{process_identifier(4242)}.db").write_bytes(b"x")
    (tmp_path / f"counter_{process_identifier(4242)}.db").write_bytes(b"x")  # counts stay: they still add up

    class Worker:
        pid = 4242

    gunicorn_conf.child_exit(server=None, worker=Worker())
    assert sorted(os.listdir(tmp_path)) == [f"counter_{process_identifier(4242)}.db"]


def test_a_worker_freezes_its_start_up_heap():
    import gc

    gc.unfreeze()
    try:
        gunicorn_conf.post_worker_init(worker=None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
