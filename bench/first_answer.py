"""The first answer of a freshly started server, asked as soon as its health check says ready.

    .venv/bin/python bench/first_answer.py [--runs 3] [--question "..."]

Each run starts `manage.py serve` (what `make run` serves: the web process and both workers) on a
free port, polls `/api/v1/health` until it says `"ready": true` (the models a question needs are
loaded: rag.warmup), then asks one question through the REST API with the demo API key (use_cache
off) and times it, then a second one. Needs the demo data (`make demo`); uses the checkout's own
database and REDIS_URL. #36's target: the first answer after "ready" in 3 s or less.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "What law governs the distributor agreement?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get_json(url: str) -> dict:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 (our own server)
            return json.load(response)
    except urllib.error.HTTPError as error:
        return json.load(error)


def ask(base: str, key: str, question: str) -> tuple[float, dict]:
    body = json.dumps({"query": question, "use_cache": False}).encode()
    request = urllib.request.Request(  # noqa: S310 (our own server)
        f"{base}/api/v1/rag/query",
        data=body,
        headers={"Authorization": key, "Content-Type": "application/json"},
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
        answer = json.load(response)
    return time.perf_counter() - started, answer


def one_run(key: str, question: str) -> tuple[float, float, float, str]:
    """(seconds until ready, first answer, second answer, the first answer's opening)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "RAG_WARM_MODELS": "true"}
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    started = time.perf_counter()
    try:
        while True:
            if serve.poll() is not None:
                raise SystemExit("the server exited")
            try:
                if get_json(f"{base}/api/v1/health").get("ready"):
                    break
            except OSError:
                pass
            time.sleep(0.2)
        ready = time.perf_counter() - started
        first, answer = ask(base, key, question)
        second, _ = ask(base, key, question)
        return ready, first, second, (answer.get("answer") or answer.get("message") or "")[:90]
    finally:
        os.killpg(serve.pid, 2)
        serve.wait(60)


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    key = json.loads((ROOT / "var" / "demo-credentials.json").read_text())["api_key"]
    key = key if key.startswith("Api-Key") else f"Api-Key {key}"
    rows = []
    for run in range(args.runs):
        ready, first, second, opening = one_run(key, args.question)
        rows.append((ready, first, second))
        print(f"run {run + 1}: ready after {ready:.1f} s; first answer {first:.2f} s, second {second:.2f} s")
        print(f"  {opening}")
    for name, column in (("ready", 0), ("first answer", 1), ("second answer", 2)):
        values = [row[column] for row in rows]
        middle = statistics.median(values)
        print(f"{name:14} min {min(values):.2f}  median {middle:.2f}  max {max(values):.2f} s")


if __name__ == "__main__":
    main()
