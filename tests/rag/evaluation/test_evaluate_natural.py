"""manage.py evaluate natural: it starts the shared runner with the options it was given (a fake
runner here records them) and exits with the runner's status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

FAKE_RUNNER = """
import json, os, sys
with open(os.environ["FAKE_RUNNER_RECORD"], "w") as record:
    json.dump(sys.argv[1:], record)
sys.exit(int(os.environ.get("FAKE_RUNNER_EXIT", "0")))
"""


@pytest.fixture
def checkout(tmp_path, settings, monkeypatch):
    """A project root with ../shared/eval/natural/{run.py (fake), dev.json} beside it."""
    root = tmp_path / "checkout"
    natural = tmp_path / "shared" / "eval" / "natural"
    root.mkdir()
    natural.mkdir(parents=True)
    (natural / "run.py").write_text(FAKE_RUNNER, encoding="utf-8")
    (natural / "dev.json").write_text('{"cases": [], "questions": []}', encoding="utf-8")
    settings.BASE_DIR = root
    monkeypatch.setenv("FAKE_RUNNER_RECORD", str(tmp_path / "argv.json"))
    return root


def recorded(tmp_path: Path) -> list[str]:
    return json.loads((tmp_path / "argv.json").read_text(encoding="utf-8"))


def test_defaults_come_from_the_shared_evaluation_files(tmp_path, checkout):
    call_command("evaluate", "natural", "--base", "http://127.0.0.1:8001", "--key", "lx_demo")
    shared = checkout / ".." / "shared" / "eval"
    assert recorded(tmp_path) == [
        *("--base", "http://127.0.0.1:8001", "--key", "Api-Key lx_demo", "--mode", "sync"),
        *("--questions", str(shared / "natural" / "dev.json"), "--corpus-root", str(shared)),
    ]


def test_every_option_is_passed_through(tmp_path, checkout):
    runner = tmp_path / "elsewhere" / "my_run.py"
    runner.parent.mkdir()
    runner.write_text(FAKE_RUNNER, encoding="utf-8")
    questions = tmp_path / "held-out.json"
    questions.write_text("{}", encoding="utf-8")
    call_command(
        "evaluate",
        "natural",
        *("--base", "http://10.0.0.5:8000", "--key", "Api-Key lx_owner", "--runner", str(runner)),
        *("--questions", str(questions), "--corpus-root", str(tmp_path), "--mode", "agentic"),
        *("--json", "out.json", "--kinds", "named,case", "--limit", "7"),
    )
    assert recorded(tmp_path) == [
        *("--base", "http://10.0.0.5:8000", "--key", "Api-Key lx_owner", "--mode", "agentic"),
        *("--questions", str(questions), "--corpus-root", str(tmp_path)),
        *("--json", "out.json", "--kinds", "named,case", "--limit", "7"),
    ]


@pytest.mark.parametrize("status", [1, 2])
def test_the_runners_exit_status_is_the_commands(tmp_path, checkout, monkeypatch, status):
    monkeypatch.setenv("FAKE_RUNNER_EXIT", str(status))
    with pytest.raises(CommandError, match=f"exited with status {status}") as raised:
        call_command("evaluate", "natural", "--base", "http://127.0.0.1:8001", "--key", "lx_demo")
    assert raised.value.returncode == status


def test_the_exit_status_reaches_the_shell(tmp_path, checkout):
    fake = checkout / ".." / "shared" / "eval" / "natural" / "run.py"
    command = [sys.executable, "manage.py", "evaluate", "natural", "--base", "http://127.0.0.1:8001"]
    command += [
        "--key",
        "lx_demo",
        "--runner",
        str(fake),
        "--questions",
        str(fake),
        "--corpus-root",
        str(tmp_path),
    ]
    env = {**os.environ, "FAKE_RUNNER_EXIT": "2"}
    finished = subprocess.run(command, cwd=Path(__file__).resolve().parents[3], env=env, capture_output=True)
    assert finished.returncode == 2, finished.stderr
    assert recorded(tmp_path)[:2] == ["--base", "http://127.0.0.1:8001"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"--runner": "missing.py"}, "No such runner"),
        ({"--questions": "missing.json"}, "No such question file"),
        ({"--corpus-root": "missing-dir"}, "No such corpus root"),
        ({"--mode": "async"}, "invalid choice"),
    ],
)
def test_bad_inputs_are_refused_before_the_runner_starts(tmp_path, checkout, options, message):
    argv = ["--base", "http://127.0.0.1:8001", "--key", "lx_demo"]
    for flag, value in options.items():
        argv += [flag, value if flag == "--mode" else str(tmp_path / value)]
    with pytest.raises(CommandError, match=message):
        call_command("evaluate", "natural", *argv)
    assert not (tmp_path / "argv.json").exists()


def test_base_and_key_are_required(checkout):
    with pytest.raises(CommandError, match="--base"):
        call_command("evaluate", "natural", "--key", "lx_demo")
    with pytest.raises(CommandError, match="--key"):
        call_command("evaluate", "natural", "--base", "http://127.0.0.1:8001")
