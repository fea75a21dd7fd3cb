"""bench/review_table.py: how long a review table of a whole matter takes to fill, in process.

    .venv/bin/python bench/review_table.py [--tenant demo-law-firm] [--cases "CUAD review dev"]
        [--columns non_compete,...] [--questions "When are invoices payable?",...]

Issue #34's target: a table of 100 documents x 10 built-in columns in 2 minutes or less, and with
typed questions, progress visible from the first second. The documents of every case whose name
starts with `--cases` (four matters of 25 CUAD contracts after `python3
../shared/eval/natural/serve_and_run.py --bench cuad-review`) are put in one scratch case inside a
transaction that is rolled back at the end, so the benchmark leaves the database as it found it.
The table is filled as the worker does (`rag.review.tables.fill.table_fill`, sync, extractive, the
answer cache off); the figures are the wall time and the time to the first finished cells (a
fresh process loads its models on its first question: `--warm` answers one before the clock).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import setup_django

# 7 clause types and 3 values: what a diligence table usually starts with.
DEFAULT_COLUMNS = (
    "non_compete,exclusivity,anti_assignment,termination_for_convenience,cap_on_liability,"
    "insurance,audit_rights,governing_law,expiration_date,renewal_term"
)


class RolledBack(Exception):
    """Raised at the end of the transaction so that nothing the benchmark did is kept."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenant", default="demo-law-firm")
    parser.add_argument("--cases", default="CUAD review dev", help="the cases' name prefix")
    parser.add_argument("--columns", default=DEFAULT_COLUMNS, help="built-in column keys, comma-separated")
    parser.add_argument("--questions", default="", help="typed questions, separated by '|'")
    parser.add_argument(
        "--warm", action="store_true", help="answer one question first, as a worker that has served before"
    )
    args = parser.parse_args(argv)
    setup_django()
    from django.db import transaction

    from rag import services as rag_services
    from rag.models import Case, Chunk, Document
    from rag.queries.caller import Caller
    from rag.review.tables import fill, services
    from tenants.models import Role, Tenant

    tenant = Tenant.objects.get(slug=args.tenant)
    cases = list(Case.objects.filter(tenant=tenant, name__startswith=args.cases))
    if not cases:
        raise SystemExit(f"no case named {args.cases!r}… in {args.tenant}")
    columns = [{"key": key} for key in args.columns.split(",") if key]
    columns += [{"question": text} for text in args.questions.split("|") if text.strip()]
    finished: list[float] = []  # when each cell was counted done, seconds after the start
    counted = fill._progress

    def timed_progress(table, run, **values):
        counted(table, run, **values)
        if "done" in values and "total" not in values:
            finished.append(time.perf_counter() - started)

    asked = fill.run_query
    fill._progress = timed_progress
    fill.run_query = lambda **kwargs: asked(**{**kwargs, "use_cache": False})  # every cell computed
    try:
        with transaction.atomic():
            scratch = rag_services.case_create(tenant=tenant, name="bench: every document")
            documents = Document.objects.filter(tenant=tenant, case__in=cases)
            count = documents.update(case=scratch)
            Chunk.objects.filter(tenant=tenant, document__case=scratch).update(case=scratch)
            caller = Caller(tenant=tenant, role=Role.ADMIN)
            if args.warm:  # the models a fresh process loads on its first question
                asked(tenant=tenant, question="What law governs?", filters={"case_ids": [scratch.pk]})
            table = services.review_table_create(
                caller=caller, case_id=scratch.pk, columns=columns, enqueue=False
            )
            started = time.perf_counter()
            status = fill.table_fill(table_id=table.pk, run=table.run)
            elapsed = time.perf_counter() - started
            table.refresh_from_db()
            print(f"{count} documents x {len(columns)} columns = {table.total} cells: {status}")
            print(f"filled in {elapsed:.1f} s ({table.done} cells done)")
            if finished:
                then = [round(t, 2) for t in finished[1:6]]
                print(f"first cells counted done after {finished[0]:.2f} s; then {then}")
            raise RolledBack
    except RolledBack:
        pass
    finally:
        fill._progress, fill.run_query = counted, asked
    return 0


if __name__ == "__main__":
    sys.exit(main())
