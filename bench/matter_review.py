"""bench/matter_review.py: how long a list question over a whole matter takes, in process.

    .venv/bin/python bench/matter_review.py [--tenant demo-law-firm] [--cases "CUAD review dev"] [--runs 3]

Asks every built-in clause type's list question ("Which of these agreements contain <clause>?")
through the pipeline (`run_query`, sync, extractive, no cache) over (a) each case whose name starts
with `--cases` and (b) all of them at once, and prints p50/p95/max per scope size. The documents
must be indexed already (e.g. by `python3 ../shared/eval/natural/serve_and_run.py --bench
cuad-review`, which uploads four matters of 25 CUAD contracts into the demo firm); documents without
clause signals get them on the first question (reported separately as the cold start).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import setup_django


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenant", default="demo-law-firm")
    parser.add_argument("--cases", default="CUAD review dev", help="the cases' name prefix")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    setup_django()
    from rag.models import Case, Document, DocumentStatus
    from rag.pipeline.run import run_query
    from rag.retrieval.service import Reader
    from rag.review.columns import PRESENCE_COLUMNS
    from rag.review.model import clause_model
    from tenants.models import Role, Tenant

    tenant = Tenant.objects.get(slug=args.tenant)
    cases = list(Case.objects.filter(tenant=tenant, name__startswith=args.cases).order_by("name"))
    if not cases:
        raise SystemExit(f"no case named {args.cases!r}… in {args.tenant}")
    model = clause_model()
    columns = [c for c in PRESENCE_COLUMNS if model is not None and c.key in model.probes]
    reader = Reader(role=Role.ADMIN)
    scopes = [[case.pk] for case in cases] + ([[case.pk for case in cases]] if len(cases) > 1 else [])
    print(f"{len(columns)} list questions x {args.runs} runs per scope (sync, extractive, no cache)")
    for case_ids in scopes:
        documents = Document.objects.filter(case_id__in=case_ids, status=DocumentStatus.READY).count()
        timings = []
        started = time.perf_counter()
        for run in range(args.runs):
            for column in columns:
                clock = time.perf_counter()
                run_query(
                    tenant=tenant,
                    question=f"Which of these agreements contain {column.noun}?",
                    reader=reader,
                    filters={"case_ids": case_ids},
                    use_cache=False,
                )
                timings.append((time.perf_counter() - clock) * 1000)
            if run == 0:
                cold = (time.perf_counter() - started) * 1000
        p50, p95 = statistics.median(timings), percentile(timings, 0.95)
        print(
            f"{documents:4d} documents: p50 {p50:7.0f} ms  p95 {p95:7.0f} ms  max {max(timings):7.0f} ms  "
            f"(first pass {cold / 1000:.1f} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
