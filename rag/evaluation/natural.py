"""The natural-question benchmark's runner (../shared/eval/natural/run.py) as `manage.py evaluate
natural` starts it: against an app already serving at a base URL, with an API key that may upload.
The runner is standard-library Python; see its README for what it measures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

# Beside the checkout, as the shared evaluation files are laid out (../shared/eval/).
SHARED_EVAL = Path("../shared/eval")
DEFAULT_RUNNER = SHARED_EVAL / "natural" / "run.py"
DEFAULT_QUESTIONS = SHARED_EVAL / "natural" / "dev.json"
DEFAULT_CORPUS_ROOT = SHARED_EVAL
MODES = ("sync", "agentic")


def project_path(path: Path) -> Path:
    """A default path, relative to the project's root (where manage.py is) rather than to the
    current directory."""
    return Path(settings.BASE_DIR) / path


@dataclass(frozen=True)
class NaturalRun:
    """One run of the natural-question runner: where it is, what it asks, against which app."""

    runner: Path
    base: str
    key: str
    questions: Path
    corpus_root: Path
    mode: str = "sync"
    json_out: str | None = None
    kinds: str | None = None
    limit: int | None = None

    def argv(self, python: str) -> list[str]:
        """The runner's command line, started with the interpreter `python`. A bare key gets the
        "Api-Key " scheme the API expects; options not given are left to the runner."""
        key = self.key if self.key.startswith("Api-Key ") else f"Api-Key {self.key}"
        argv = [python, str(self.runner), "--base", self.base, "--key", key, "--mode", self.mode]
        argv += ["--questions", str(self.questions), "--corpus-root", str(self.corpus_root)]
        for flag, value in (("--json", self.json_out), ("--kinds", self.kinds), ("--limit", self.limit)):
            if value is not None:
                argv += [flag, str(value)]
        return argv
