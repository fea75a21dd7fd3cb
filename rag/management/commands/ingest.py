"""manage.py ingest PATH... --tenant SLUG --case NAME — bulk-ingest files and folders (recursively).

Each file is uploaded through the same service as the API (same checks, same de-duplication) and
ingested on a worker process (in this one with `--jobs 1`), with a progress bar and a summary of
ok / duplicate / failed with reasons.

`--jobs N` runs N worker processes (default: one per core, at most 4), each with one torch thread:
a process reading, scanning or writing one file no longer leaves a core idle while the other embeds
(on two cores about 1.2x the throughput of one process using both; bench/README, "Ingestion at
archive size"). Files go to whichever worker is free; a file whose bytes repeat one already taken in
this run is counted a duplicate without being sent again.

`--skip-known` leaves out files whose bytes the firm already holds in any of its cases (an archive
imported beside the matters it was drawn from holds each contract once; the benchmarks' distractor
mode, bench/README.md). A run stopped part way is resumed by running it again: what is indexed is a
duplicate (or known), what failed is tried again.

The clause signals matter review reads (rag.review.signals) are not computed here, so a bulk
import runs at embedding speed: `manage.py review_signals` computes them afterwards as a pass of
its own, with progress (else the first matter-wide question meeting a document computes its own).
"""

import hashlib
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from rag import services as rag_services
from rag.ingest import service, workers
from rag.models import DocType, Document, SourceType
from ragsite.exceptions import NotFound
from tenants.selectors import owned_list, tenant_get_by_slug

SUFFIXES = {".pdf", ".docx", ".txt"}
MAX_DEFAULT_JOBS = 4  # each worker holds its own copy of the models (~1 GB)


def _files(paths: list[str]) -> list[Path]:
    found = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        elif path.is_file():
            found.append(path)
        else:
            raise CommandError(f"No such file or directory: {raw}")
    return found


class Command(BaseCommand):
    help = "Ingest PDF, DOCX and TXT files (directories recursively) into a tenant's case."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+")
        parser.add_argument("--tenant", required=True, help="tenant slug")
        parser.add_argument("--case", required=True, help="case name (created if missing)")
        parser.add_argument("--source-type", default=SourceType.USER_UPLOAD, choices=SourceType.values)
        parser.add_argument("--doc-type", default=DocType.OTHER, choices=DocType.values)
        parser.add_argument("--jurisdiction", default="")
        parser.add_argument("--limit", type=int, default=0, help="ingest at most N files")
        parser.add_argument(
            "--skip-known", action="store_true", help="skip files whose bytes are in any case of the tenant"
        )
        parser.add_argument(
            "--jobs",
            type=int,
            default=min(os.cpu_count() or 1, MAX_DEFAULT_JOBS),
            help="worker processes, one torch thread each (1: in this process, every core; "
            "default: one per core, at most 4)",
        )

    def handle(
        self,
        *args,
        paths,
        tenant,
        case,
        source_type,
        doc_type,
        jurisdiction,
        limit,
        skip_known,
        jobs,
        **options,
    ):
        if jobs < 1:
            raise CommandError("--jobs must be at least 1")
        try:
            tenant_obj = tenant_get_by_slug(slug=tenant)
        except NotFound as exc:
            raise CommandError(f"Unknown tenant {tenant!r}") from exc
        case_obj = rag_services.case_get_or_create(tenant=tenant_obj, name=case)
        files = _files(paths)[: limit or None]
        fields = service.DocumentFields(source_type=source_type, doc_type=doc_type, jurisdiction=jurisdiction)
        outcome: Counter = Counter()
        failures: list[tuple[Path, str]] = []
        chunks = 0
        progress = tqdm(total=len(files), unit="file", desc="ingesting", disable=not files)
        known = _known_elsewhere(tenant_obj, case_obj) if skip_known else set()
        taken: set[str] = set()  # the bytes this run has already sent to be ingested

        def work() -> Iterator[Path | str]:
            for path in files:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                if digest in known:
                    yield "known"
                elif digest in taken:
                    yield "duplicate"
                else:
                    taken.add(digest)
                    yield path

        ingest = workers.FileIngest(tenant_id=tenant_obj.pk, case_id=case_obj.pk, fields=asdict(fields))
        for path, (status, passages, reason) in workers.ingested(work(), ingest, jobs):
            progress.update()
            outcome[status] += 1
            chunks += passages
            if status == "failed":
                failures.append((path, reason))
            progress.set_postfix(chunks=chunks, failed=outcome["failed"])
        progress.close()

        self.stdout.write(
            f"{outcome['ok']} ok, {outcome['duplicate']} duplicate, {outcome['failed']} failed"
            + (f", {outcome['known']} already in other cases" if skip_known else "")
            + "; "
            f"{chunks} passages indexed into case {case_obj.name!r} of {tenant_obj.slug}"
        )
        for path, reason in failures:
            self.stdout.write(f"  failed: {path}: {reason}")
        if outcome["ok"]:
            hint = f"manage.py review_signals --tenant {tenant_obj.slug}"
            self.stdout.write(f"Clause signals for matter review, as a pass of their own: {hint}")


def _known_elsewhere(tenant, case) -> set[str]:
    """The sha256 of every document the tenant holds outside `case` (inside it, the upload's own
    de-duplication answers "duplicate" and retries a failed one)."""
    return set(owned_list(Document, tenant=tenant).exclude(case=case).values_list("sha256", flat=True))
