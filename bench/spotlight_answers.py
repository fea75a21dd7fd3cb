#!/usr/bin/env python
# Spotlighting (issue #20, item 1) must not change what the offline extractive model answers: it
# reads `Source.text`, which fencing leaves intact, and the boundary costs the same tokens on every
# request. This records, for the 83 LegalBench-RAG dev queries over the 29 CUAD contracts (ingested on
# first use, as bench/pipeline.py does), each answer, its citations and the passages that fit the
# budget, as JSON; run it on two commits and compare the files (`--compare A B`).
"""Extractive answers, for comparing two commits.

.venv/bin/python bench/spotlight_answers.py --out FILE
.venv/bin/python bench/spotlight_answers.py --compare BEFORE AFTER
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import setup_django  # noqa: E402

LEGALBENCH = Path("/work/shared/eval/legalbench-cuad")


def record(out: Path) -> None:
    setup_django()
    from rag.evaluation.runner import ingest_corpus
    from rag.pipeline.run import run_query
    from rag.retrieval.service import Reader
    from tenants.models import Role

    tests = json.loads((LEGALBENCH / "dev.json").read_text())["tests"]
    queries = list(dict.fromkeys(test["query"].strip() for test in tests))
    tenant = ingest_corpus(LEGALBENCH / "corpus").tenant
    rows = []
    for question in queries:
        ctx = run_query(tenant=tenant, question=question, reader=Reader(role=Role.ADMIN), use_cache=False)
        rows.append(
            {
                "query": question,
                "answer": ctx.result["answer"],
                "citations": [(c["document_id"], c.get("snippet")) for c in ctx.result.get("citations", [])],
                "passages": [e.passage.chunk_id for e in ctx.context.entries] if ctx.context else [],
                "context_tokens": ctx.context.tokens if ctx.context else 0,
            }
        )
    out.write_text(json.dumps(rows, indent=1))
    print(f"{len(rows)} queries -> {out}")


def compare(before: Path, after: Path) -> None:
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    same = {
        key: sum(a[key] == b[key] for a, b in zip(old, new, strict=True))
        for key in ("answer", "citations", "passages")
    }
    extra = [
        b["context_tokens"] - a["context_tokens"]
        for a, b in zip(old, new, strict=True)
        if a["passages"] == b["passages"]
    ]
    print(f"{len(old)} queries; identical: " + ", ".join(f"{key} {count}" for key, count in same.items()))
    if extra:
        print(f"context tokens added per query (same passages): min {min(extra)}, max {max(extra)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path)
    args = parser.parse_args()
    compare(*args.compare) if args.compare else record(args.out)
