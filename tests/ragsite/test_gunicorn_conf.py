"""The production gunicorn settings: Prometheus multi-process housekeeping, a frozen start-up heap."""

import os

from ragsite import gunicorn_conf


def test_starting_empties_the_metrics_directory(tmp_path, monkeypatch):
    directory = tmp_path / "prometheus"
    directory.mkdir()
    (directory / "counter_123.db").write_bytes(b"old run")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))
    gunicorn_conf.on_starting(server=None)
    assert directory.is_dir() and not any(directory.iterdir())


def test_a_dead_workers_live_gauge_files_are_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    (tmp_path / "gauge_livesum_4242.db").write_bytes(b"x")
    (tmp_path / "counter_4242.db").write_bytes(b"x")  # counts stay: they still add up

    class Worker:
        pid = 4242

    gunicorn_conf.child_exit(server=None, worker=Worker())
    assert sorted(os.listdir(tmp_path)) == ["counter_4242.db"]


def test_a_worker_freezes_its_start_up_heap():
    import gc

    gc.unfreeze()
    try:
        gunicorn_conf.post_worker_init(worker=None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
