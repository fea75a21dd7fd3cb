#!/usr/bin/env python3
"""A served Lexrag end to end, through its REST API only (standard library, no checkout needed).

    python3 docker/smoke.py --url http://127.0.0.1:8000 --api-key lx_… [--documents demo/documents]

For a stack just started (docker compose, docs/deployment.md): the health check says ready; the
demo contracts uploaded into a new case are each ingested by a worker to "ready"; a synchronous
question is answered from the distributor agreement; an asynchronous one is answered by a query
worker; and the tenant's metrics count that job (so the workers' metrics reach /metrics). The key
must be an admin's (`manage.py demo_setup` prints one). Exits 1 at the first check that fails.
Production settings redirect plain HTTP to HTTPS: give the URL behind the TLS proxy, or serve the
bare stack with SECURE_SSL_REDIRECT=false for this check.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

DEMO_DOCUMENTS = Path(__file__).resolve().parent.parent / "demo" / "documents"


class Api:
    def __init__(self, url: str, key: str):
        self.url, self.key = url.rstrip("/"), key

    def call(self, method: str, path: str, body: bytes | None = None, content_type: str = "") -> tuple:
        request = urllib.request.Request(self.url + path, data=body, method=method)  # noqa: S310 (the given URL)
        request.add_header("Authorization", f"Api-Key {self.key}")
        if content_type:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def json(self, method: str, path: str, payload: dict | None = None) -> tuple[int, dict]:
        body = json.dumps(payload).encode() if payload is not None else None
        status, raw = self.call(method, path, body, "application/json" if body else "")
        return status, json.loads(raw or b"{}")

    def upload(self, path: str, files: list[Path], fields: dict) -> tuple[int, dict]:
        boundary = uuid.uuid4().hex
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items()
        ]
        for file in files:
            kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            head = (
                f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{file.name}"\r\n'
                f"Content-Type: {kind}\r\n\r\n"
            )
            parts.append(head.encode() + file.read_bytes() + b"\r\n")
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        status, raw = self.call("POST", path, body, f"multipart/form-data; boundary={boundary}")
        return status, json.loads(raw or b"{}")


def check(ok: bool, what: str, detail: object = "") -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail != "" else ""))
    if not ok:
        sys.exit(1)


def wait_for(poll, *, seconds: float, every: float = 2.0):
    """poll() until it returns something truthy, or the last value after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        value = poll()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every)


def queries_counted(api: Api) -> float:
    status, raw = api.call("GET", "/api/v1/rag/admin/metrics")
    check(status == 200, "tenant metrics readable", status)
    lines = raw.decode().splitlines()
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("rag_queries_total{"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--api-key", required=True, help="an admin's API key")
    parser.add_argument("--documents", type=Path, default=DEMO_DOCUMENTS)
    args = parser.parse_args(argv)
    api = Api(args.url, args.api_key)

    health = wait_for(lambda: api.json("GET", "/api/v1/health")[1].get("ready"), seconds=180)
    check(bool(health), "health says ready")

    status, case = api.json(
        "POST", "/api/v1/rag/cases", {"name": f"Smoke {time.strftime('%Y-%m-%d %H:%M:%S')}"}
    )
    check(status == 201, "case created", case.get("id", case))
    files = sorted(p for p in args.documents.iterdir() if p.is_file())
    status, uploaded = api.upload(
        f"/api/v1/rag/cases/{case['id']}/documents", files, {"doc_type": "contract"}
    )
    check(status == 201, f"{len(files)} documents uploaded", status if status != 201 else "")
    ids = [document["id"] for document in uploaded["documents"]]
    query = "&".join(f"id={i}" for i in ids)

    def settled():
        rows = api.json("GET", f"/api/v1/rag/cases/{case['id']}/documents?{query}&page_size=50")[1]["results"]
        states = {row["id"]: row["status"] for row in rows}
        return states if all(s in ("ready", "failed") for s in states.values()) else None

    started = time.monotonic()
    states = wait_for(settled, seconds=600) or {}
    ready = sum(1 for s in states.values() if s == "ready")
    check(ready == len(ids), f"ingested by the workers in {time.monotonic() - started:.0f} s", states)

    question = {"query": "What law governs the distributor agreement?", "filters": {"case_ids": [case["id"]]}}
    status, answer = api.json("POST", "/api/v1/rag/query", question)
    titles = [c["title"] for c in answer.get("citations", [])]
    check(
        status == 200 and titles, "sync answer with citations", (answer.get("answer", "")[:160], titles[:2])
    )
    check("distributor" in titles[0].lower(), "its first citation is the distributor agreement", titles[0])

    before = queries_counted(api)  # from here only the job adds to it
    asked = {
        "query": "Can the co-branding agreement be assigned?",
        "mode": "async",
        "filters": question["filters"],
    }
    status, job = api.json("POST", "/api/v1/rag/query", asked)
    check(status == 202, "async job queued", job.get("job_id", job))
    result = wait_for(
        lambda: (r := api.json("GET", job["poll_url"])[1]).get("status") in ("succeeded", "failed") and r,
        seconds=120,
        every=0.5,
    )
    check(
        bool(result) and result["status"] == "succeeded",
        "async job answered by a query worker",
        (result or {}).get("result", {}).get("answer", "")[:160],
    )
    counted = queries_counted(api) - before
    check(counted >= 1, "the worker's job is counted in the tenant's metrics", f"{counted:g} queries since")
    return 0


if __name__ == "__main__":
    sys.exit(main())
