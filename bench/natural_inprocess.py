#!/usr/bin/env python
# The natural-question benchmark's own runner (../shared/eval/natural/run.py), driven in-process:
# its HTTP client is swapped for Django's test client, so each run sees the code as it is now,
# without restarting a server. For quick iterations while tuning; the figures that count come from
# the runner against a served app (`make natural`), which this does not replace.
#
# The cases must already be ingested (run `make natural` once, or run.py --setup-only against a
# server using the same database): uploads here would need a Celery worker.
"""Natural-question benchmark, in-process.

.venv/bin/python bench/natural_inprocess.py [run.py options: --kinds, --limit, --json, --mode ...]
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import setup_django  # noqa: E402

NATURAL = REPO_ROOT.parent / "shared" / "eval" / "natural"


def load_runner():
    spec = importlib.util.spec_from_file_location("natural_run", NATURAL / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def in_process_client(runner):
    """A drop-in for run.py's Client that calls the app through Django's test client."""
    from rest_framework.test import APIClient

    class InProcessClient(runner.Client):
        def __init__(self, base, key, timeout, retries=3):
            super().__init__(base, key, timeout, retries)
            self.client = APIClient()

        def request(self, method, path, *, body=None, headers=None, timeout=None):
            kwargs = {"HTTP_AUTHORIZATION": self.auth}
            if isinstance(body, dict | list):
                response = self.client.generic(
                    method, path, json.dumps(body), content_type="application/json", **kwargs
                )
            else:
                response = self.client.generic(method, path, **kwargs)
            rid = response.headers.get("X-Request-ID")
            raw = response.content.decode("utf-8", "replace")
            if response.status_code >= 300:
                raise runner.ApiError(response.status_code, raw, rid)
            return response.status_code, (json.loads(raw) if raw else None), rid

    return InProcessClient


def main(argv: list[str]) -> int:
    setup_django()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]
    runner = load_runner()
    runner.Client = in_process_client(runner)
    key = json.loads((REPO_ROOT / "var" / "demo-credentials.json").read_text())["api_key"]
    args = ["--base", "http://testserver", "--key", key, "--corpus-root", str(NATURAL.parent), "--poll", "1"]
    if "--questions" not in argv:
        args += ["--questions", str(NATURAL / "dev.json")]
    return runner.main(args + argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
