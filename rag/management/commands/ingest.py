"""manage.py ingest PATH... --tenant SLUG --case NAME — bulk-ingest files and folders (recursively).

Each file is uploaded through the same service as the API (same checks, same de-duplication) and
ingested in this process, with a progress bar and a summary of ok / duplicate / failed with reasons.

`--skip-known` leaves out files whose bytes the firm already holds in any of its cases (an archive
imported beside the matters it was drawn from holds each contract once; the benchmarks' distractor
mode, bench/README.md). A run stopped part way is resumed by running it again: what is indexed is a
duplicate (or known), what failed is tried again.

The clause signals matter review reads (rag.review.signals) are not computed here, so a bulk
import runs at embedding speed: `manage.py review_signals` computes them afterwards as a pass of
its own, with progress (else the first matter-wide question meeting a document computes its own).
"""

import hashlib
from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from rag import services as rag_services
from rag.ingest import service
from rag.models import DocType, Document, SourceType
from ragsite.exceptions import NotFound
from tenants.selectors import owned_list, tenant_get_by_slug

SUFFIXES = {".pdf", ".docx", ".txt"}


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

    def handle(
        self, *args, paths, tenant, case, source_type, doc_type, jurisdiction, limit, skip_known, **options
    ):
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
        progress = tqdm(files, unit="file", desc="ingesting", disable=not files)
        known = _known_elsewhere(tenant_obj, case_obj) if skip_known else set()
        for path in progress:
            content = path.read_bytes()
            if hashlib.sha256(content).hexdigest() in known:
                outcome["known"] += 1
                continue
            result = service.ingest_now(
                tenant=tenant_obj, case=case_obj, filename=path.name, content=content, fields=fields
            )
            outcome[result.status] += 1
            if result.status == "ok":
                chunks += result.document.chunk_count
            elif result.status == "failed":
                failures.append((path, result.reason))
            progress.set_postfix(chunks=chunks, failed=outcome["failed"])

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
