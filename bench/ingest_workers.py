#!/usr/bin/env python
# Bulk-ingestion benchmark: prints figures, it is not a test.
#
# bench/ingest.py splits one process's ingestion into stages. This one measures what a firm runs:
# `manage.py ingest --jobs N` (worker processes, one torch thread each), from the command's start to
# its summary, against the embedding bound of the same machine: how fast the same passages are
# embedded when every core does nothing else. Target (issue #37 item 3): the command at ≥ 90 % of
# that bound; all 510 CUAD contracts in ≤ 20 min.
"""Bulk ingestion with worker processes against the embedding bound.

    .venv/bin/python bench/ingest_workers.py [--corpus DIR] [--limit N] [--jobs N]
                                             [--bound-sample N] [--keep] [--json OUT]

1. `manage.py ingest --jobs N` of the corpus into a new tenant `bench-workers-<timestamp>`,
   timed from the command's start (spawning workers and loading their models included);
2. the embedding bound: a deterministic sample of the passages just written, embedded (a) in this
   process on every core and (b) by N spawned processes of one torch thread each, started together
   once their models are loaded; the faster of the two is the bound;
3. the share: the command's passages/s over the bound's.

The tenant and its stored files are deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import (  # bench/ingest.py, beside this file
    DEFAULT_CORPUS,
    delete_tenant,
    deterministic_sample,
    embedded_texts,
    requested_files,
    setup_django,
)

TARGET_SHARE = 0.90
TARGET_MINUTES_510 = 20


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=0, help="first N files (default: all)")
    parser.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 4))
    parser.add_argument("--bound-sample", type=int, default=3000, help="passages embedded for the bound")
    parser.add_argument("--keep", action="store_true", help="keep the bench tenant")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser.parse_args(argv)


def run_command(*, tenant_slug: str, files: list[Path], jobs: int) -> float:
    """Seconds `manage.py ingest` takes for `files` (the command takes files as it takes folders)."""
    from django.core.management import call_command

    started = time.perf_counter()
    call_command(
        "ingest",
        *map(str, files),
        tenant=tenant_slug,
        case="Bench",
        doc_type="contract",
        jobs=jobs,
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    return time.perf_counter() - started


def bound_in_process(texts: list[str]) -> float:
    """Passages/s of `embedding.embed` here, torch on every core."""
    import torch

    from rag.ingest import embedding

    torch.set_num_threads(os.cpu_count() or 1)
    embedding.embed(texts[:32])  # model loaded and warm
    started = time.perf_counter()
    embedding.embed(texts)
    return len(texts) / (time.perf_counter() - started)


def _embed_share(texts: list[str], ready, go, results) -> None:
    """A spawned process: load the model on one thread, wait for its siblings, embed its share."""
    setup_django()
    import torch

    from rag.ingest import embedding

    torch.set_num_threads(1)
    embedding.embed(texts[:8])
    ready.put(True)
    go.wait()
    started = time.perf_counter()
    embedding.embed(texts)
    results.put((started, time.perf_counter()))


def bound_in_workers(texts: list[str], jobs: int) -> float:
    """Passages/s of `jobs` processes of one torch thread each embedding equal shares of `texts`,
    from the moment all are loaded to the last one's end (the shape the command's workers have)."""
    context = multiprocessing.get_context("spawn")
    ready, results, go = context.Queue(), context.Queue(), context.Event()
    shares = [texts[i::jobs] for i in range(jobs)]
    processes = [context.Process(target=_embed_share, args=(s, ready, go, results)) for s in shares]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get()
    go.set()
    spans = [results.get() for _ in processes]
    for process in processes:
        process.join()
    return len(texts) / (max(end for _, end in spans) - min(start for start, _ in spans))


def main(argv=None) -> int:
    args = parse_args(argv)
    files = requested_files(args.corpus, args.limit)
    if not files:
        return 2
    setup_django()
    from rag.models import Case
    from tenants.services import tenant_create

    slug = f"bench-workers-{int(time.time())}"
    tenant = tenant_create(slug=slug, name=slug)
    try:
        seconds = run_command(tenant_slug=slug, files=files, jobs=args.jobs)
        texts = embedded_texts(tenant=tenant, case=Case.objects.get(tenant=tenant, name="Bench"))
        sample = deterministic_sample(texts, args.bound_sample)
        here = bound_in_process(sample)
        spawned = bound_in_workers(sample, args.jobs)
    finally:
        if not args.keep:
            delete_tenant(tenant)
    bound = max(here, spawned)
    rate = len(texts) / seconds
    share = rate / bound
    projected_510 = 510 / len(files) * seconds / 60
    figures = {
        "files": len(files),
        "passages": len(texts),
        "jobs": args.jobs,
        "cpu_count": os.cpu_count(),
        "command_seconds": seconds,
        "command_passages_per_s": rate,
        "bound_sample": len(sample),
        "bound_in_process_per_s": here,
        "bound_in_workers_per_s": spawned,
        "share_of_bound": share,
        "share_pass": share >= TARGET_SHARE,
        "minutes_for_510_at_this_rate": projected_510,
    }
    print(
        f"\nmanage.py ingest --jobs {args.jobs}: {len(files)} files, {len(texts)} distinct passages in "
        f"{seconds:.1f} s → {rate:.1f} passages/s (tenant {slug}, {'kept' if args.keep else 'deleted'})\n"
        f"embedding bound on {len(sample)} of them: {here:.1f} passages/s in one process on "
        f"{os.cpu_count()} threads, {spawned:.1f} in {args.jobs} processes of one thread\n"
        f"{'PASS' if share >= TARGET_SHARE else 'FAIL'} the command at {share:.1%} of the bound "
        f"{bound:.1f} passages/s (target ≥ {TARGET_SHARE:.0%})\n"
        f"510 files at this rate: {projected_510:.1f} min (target ≤ {TARGET_MINUTES_510}; a projection "
        f"unless all 510 were ingested)"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
