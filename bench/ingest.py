#!/usr/bin/env python
# Ingestion benchmark: prints figures, it is not a test.
#
# What it measures, in one run against the real database and the packaged all-MiniLM-L6-v2:
#   1. end to end, upload to "ready": for each corpus file, read -> document_upload(enqueue=False)
#      -> document_ingest, timed over all files with the model already loaded and warmed up, split
#      into stages (upload, extract, chunk, normalize, reuse look-up, embed, progress writes, the
#      write transaction, other) by timing wrappers that call through;
#   2. pure embedding throughput: `embedding.embed` on a deterministic sample of the normalized
#      texts of the chunks just written;
#   3. plain sentence-transformers on the same sample, default settings (the baseline);
#   4. re-ingesting the first min(20, N) files into a second case of the same tenant, counting the
#      texts sent to the model;
#   5. a small table of `embed` configurations (batch size, ordering, torch threads) with their
#      speed and their largest cosine deviation from plain;
#   6. peak resident memory of this process.
#
# Targets (from the issue):
#   - end-to-end throughput >= 90 % of pure embedding throughput: embedding is the cost, everything
#     else (extraction, chunking, normalization, database writes) must stay in its shadow;
#   - text already embedded for the tenant with the same model is never embedded again;
#   - the fastest backend must stay within one point of plain sentence-transformers on retrieval
#     quality (cannot be judged until the retrieval evaluation exists; its speed ratio is printed).
#
# What we know of this machine (2 cores, AVX2, no AVX-512): plain encoding of ~130-word chunks ran
# at ~36 chunks/s, near the fp32 compute bound of two cores for MiniLM, so no configuration of the
# same fp32 model should be expected to be much faster; the table checks that.
"""Ingestion benchmark: end-to-end documents/s and chunks/s versus pure embedding throughput.

    .venv/bin/python bench/ingest.py [--corpus DIR] [--limit N] [--encode-sample N]
                                     [--table-sample N] [--keep] [--json OUT]

Creates an isolated tenant `bench-ingest-<timestamp>` and deletes it at the end (with its stored
files) unless --keep. See the header comment for what is measured and the targets.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = Path("/work/shared/eval/cuad-full-corpus/cuad")
SUFFIXES = {".pdf", ".docx", ".txt"}
REEMBED_FILES = 20
TARGET_E2E_SHARE = 0.90
SAMPLE_SEED = 20240611
# Stages in the order a document meets them; "other" is whatever no wrapper covers.
STAGES = (
    "upload",
    "extract",
    "title",
    "chunk",
    "normalize",
    "reuse_lookup",
    "embed",
    "sanitize",
    "progress",
    "write",
    "other",
)
STAGE_NOTES = {
    "upload": "checks, sha256, store file, insert row",
    "extract": "text extraction",
    "title": "title from the text",
    "chunk": "chunk_document (with the model's window per passage)",
    "normalize": "normalize() of each passage",
    "reuse_lookup": "query for already-embedded hashes",
    "embed": "embedding.embed (model forward)",
    "sanitize": "injection findings and scans of each passage",
    "progress": "progress updates on the document row",
    "write": "transaction: chunk rows + indexes + commit",
    "other": "file read, hashing, building rows, loop",
}


def setup_django() -> None:
    """Configure Django the way manage.py does, from the repository root, never touching the hub."""
    sys.path.insert(0, str(REPO_ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.local")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")  # one "document indexed" line per file otherwise
    import django

    django.setup()


def cpu_seconds() -> tuple[float, float | None]:
    """(CPU seconds used by this process, CPU seconds used by the whole machine or None off Linux).

    Their difference over a phase is what everything else (PostgreSQL, other people's jobs) took:
    with two cores and two torch threads, any of it slows the model down.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[:7])
        machine = (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        machine = None
    return usage.ru_utime + usage.ru_stime, machine


def peak_rss_mb() -> float:
    """Peak resident set size of this process (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class StageClock:
    """Exclusive ("self") time per stage: time inside a nested stage is not counted in its parent,
    so the stage totals add up to the wall time of the outermost stage."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter = Counter()
        self._stack: list[str] = []
        self._mark = 0.0

    @property
    def current(self) -> str | None:
        return self._stack[-1] if self._stack else None

    @contextlib.contextmanager
    def stage(self, name: str):
        now = time.perf_counter()
        if self._stack:
            self.seconds[self._stack[-1]] += now - self._mark
        self._stack.append(name)
        self.calls[name] += 1
        self._mark = now
        try:
            yield
        finally:
            now = time.perf_counter()
            self.seconds[self._stack.pop()] += now - self._mark
            self._mark = now

    def timed(self, name: str, func):
        def wrapper(*args, **kwargs):
            with self.stage(name):
                return func(*args, **kwargs)

        wrapper.__wrapped__ = func
        return wrapper


@dataclass
class EmbedCount:
    calls: int = 0
    texts: int = 0


@contextlib.contextmanager
def instrumented(clock: StageClock, count: EmbedCount):
    """Wrap the ingest service's stages with timers (and count texts embedded); undone on exit."""
    from django.db import transaction

    from rag import selectors
    from rag.ingest import embedding, service

    real_embed = embedding.embed

    def counting_embed(texts, *args, **kwargs):
        count.calls += 1
        count.texts += len(texts)
        return real_embed(texts, *args, **kwargs)

    class TimedTransaction:
        """`service.transaction` with `atomic` timed as "write" (except inside the upload, whose
        transaction stores the file and the row and belongs to the upload stage)."""

        def __getattr__(self, name):
            return getattr(transaction, name)

        @contextlib.contextmanager
        def atomic(self, *args, **kwargs):
            stage = clock.stage("write") if clock.current != "upload" else contextlib.nullcontext()
            with stage, transaction.atomic(*args, **kwargs):
                yield

    patches = [
        (service, "document_upload", clock.timed("upload", service.document_upload)),
        (service, "extract", clock.timed("extract", service.extract)),
        (service, "_set_title_from_text", clock.timed("title", service._set_title_from_text)),
        (service, "chunk_document", clock.timed("chunk", service.chunk_document)),
        (service, "injection_findings", clock.timed("sanitize", service.injection_findings)),
        (service, "prepare_document_scans", clock.timed("sanitize", service.prepare_document_scans)),
        (service, "normalize", clock.timed("normalize", service.normalize)),
        (
            selectors,
            "chunk_embeddings_by_hash",
            clock.timed("reuse_lookup", selectors.chunk_embeddings_by_hash),
        ),
        (embedding, "embed", clock.timed("embed", counting_embed)),
        (service, "_set_progress", clock.timed("progress", service._set_progress)),
        (service, "transaction", TimedTransaction()),
    ]
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    try:
        for module, name, replacement in patches:
            setattr(module, name, replacement)
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


@dataclass
class IngestRun:
    files: int = 0
    ready: int = 0
    duplicates: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0
    seconds: float = 0.0
    cpu_self_s: float = 0.0
    cpu_others_s: float | None = None
    embed_calls: int = 0
    texts_embedded: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)


def ingest_files(*, tenant, case, files: list[Path], desc: str) -> IngestRun:
    """Upload and ingest `files` one after another in this process, timed and instrumented."""
    from tqdm import tqdm

    from rag.ingest import service
    from rag.models import DocumentStatus
    from ragsite.exceptions import ApplicationError

    run = IngestRun(files=len(files))
    clock, count = StageClock(), EmbedCount()
    with instrumented(clock, count):
        progress = tqdm(files, unit="doc", desc=desc, file=sys.stderr, dynamic_ncols=True)
        cpu_before = cpu_seconds()
        started = time.perf_counter()
        for path in progress:
            with clock.stage("other"):
                try:
                    result = service.document_upload(
                        tenant=tenant, case=case, filename=path.name, content=path.read_bytes(), enqueue=False
                    )
                except ApplicationError as exc:
                    run.failures.append((path.name, f"{exc.error_type}: {exc.message}"))
                    continue
                if result.duplicate:
                    run.duplicates += 1
                    continue
                document = service.document_ingest(tenant=tenant, document_id=result.document.pk)
            if document.status == DocumentStatus.READY:
                run.ready += 1
                run.chunks += document.chunk_count
            else:
                run.failures.append((path.name, f"{document.error_type}: {document.error_message}"))
            progress.set_postfix(chunks=run.chunks, embedded=count.texts, failed=len(run.failures))
        run.seconds = time.perf_counter() - started
        cpu_after = cpu_seconds()
        run.cpu_self_s = cpu_after[0] - cpu_before[0]
        if cpu_after[1] is not None and cpu_before[1] is not None:
            run.cpu_others_s = max(cpu_after[1] - cpu_before[1] - run.cpu_self_s, 0.0)
        progress.close()
    run.embed_calls, run.texts_embedded = count.calls, count.texts
    run.stage_seconds = {name: clock.seconds.get(name, 0.0) for name in STAGES if name != "other"}
    run.stage_seconds["other"] = run.seconds - sum(run.stage_seconds.values())  # incl. loop, tqdm
    return run


def corpus_files(corpus: Path, limit: int) -> list[Path]:
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    return files[:limit] if limit else files


def requested_files(corpus: Path, limit: int) -> list[Path]:
    """The corpus files asked for; says so on stderr when there are none."""
    files = corpus_files(corpus, limit)
    if not files:
        print(f"no PDF/DOCX/TXT files under {corpus}", file=sys.stderr)
    return files


def embedded_texts(*, tenant, case) -> list[str]:
    """The distinct normalized texts of the case's chunks, in document/chunk order (what was embedded)."""
    from rag.ingest.normalize import normalize
    from rag.models import Chunk
    from tenants.selectors import owned_list

    rows = (
        owned_list(Chunk, tenant=tenant)
        .filter(case=case)
        .order_by("document_id", "index")
        .values_list("text", flat=True)
    )
    return list(dict.fromkeys(normalize(text).text for text in rows))


def deterministic_sample(texts: list[str], size: int) -> list[str]:
    if size <= 0 or size >= len(texts):
        return list(texts)
    picked = sorted(random.Random(SAMPLE_SEED).sample(range(len(texts)), size))  # noqa: S311 (not security)
    return [texts[i] for i in picked]


def timed_call(func, *args, **kwargs):
    started = time.perf_counter()
    result = func(*args, **kwargs)
    return result, time.perf_counter() - started


def unit_rows(vectors):
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def max_cosine_deviation(ours, plain_unit) -> float:
    """max over rows of 1 - cos(ours, plain)."""
    import numpy as np

    return float(np.max(1.0 - np.sum(unit_rows(ours) * plain_unit, axis=1)))


def settings_table(texts: list[str], plain_unit) -> list[dict]:
    """Speed of equivalent ways to call our `embed` on `texts`, and their deviation from plain.

    sentence-transformers sorts each `encode` call's inputs by *character* count before batching.
    Our chunks are cut by characters, so they are all about the same character length while their
    token counts vary widely; the "token-sorted" rows sort by token count instead and feed one
    batch per call (encode then cannot regroup them), which is what `embed` could do itself.
    """
    import numpy as np
    import torch
    from django.conf import settings

    from rag.ingest import embedding

    model = embedding.get_model()
    default_batch = settings.EMBEDDING_BATCH_SIZE
    default_threads = torch.get_num_threads()
    window = default_batch * 4  # document_ingest calls embed with at most 4 batches at a time

    def in_windows(func):
        def run(batch_texts):
            return np.concatenate(
                [func(batch_texts[i : i + window]) for i in range(0, len(batch_texts), window)]
            )

        return run

    def token_sorted(batch_size):
        def run(batch_texts):
            lengths = [
                len(ids) for ids in model.tokenizer(batch_texts, truncation=False, verbose=False)["input_ids"]
            ]
            order = sorted(range(len(batch_texts)), key=lambda i: -lengths[i])
            out = np.empty((len(batch_texts), embedding.EMBEDDING_DIMENSION), dtype=np.float32)
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                out[idx] = embedding.embed([batch_texts[i] for i in idx], batch_size=batch_size)
            return out

        return run

    def with_threads(n):
        def run(batch_texts):
            torch.set_num_threads(n)
            try:
                return embedding.embed(batch_texts)
            finally:
                torch.set_num_threads(default_threads)

        return run

    configs = [(f"embed() as configured: batch {default_batch}, {default_threads} threads", embedding.embed)]
    configs += [
        (f"batch {size}", lambda t, size=size: embedding.embed(t, batch_size=size))
        for size in (16, 32, 64, 128)
        if size != default_batch
    ]
    configs.append(
        (f"batch {default_batch}, calls of {window} texts (as ingest)", in_windows(embedding.embed))
    )
    configs += [(f"token-sorted, batch {size}", token_sorted(size)) for size in (16, 32, 64)]
    configs.append(
        (
            f"token-sorted, batch {default_batch}, calls of {window} (as ingest)",
            in_windows(token_sorted(default_batch)),
        )
    )
    configs += [
        (f"batch {default_batch}, torch.set_num_threads({n})", with_threads(n))
        for n in sorted({1, 2, os.cpu_count() or 1} - {default_threads})
    ]
    configs.append(("embed() as configured, again (noise check)", embedding.embed))

    rows = []
    for label, func in configs:
        vectors, seconds = timed_call(func, texts)
        rows.append(
            {
                "setting": label,
                "chunks_per_s": len(texts) / seconds,
                "seconds": seconds,
                "max_cos_dev": max_cosine_deviation(vectors, plain_unit),
            }
        )
    return rows


def delete_tenant(tenant) -> int:
    """Delete the bench tenant (everything cascades) and its stored files; returns files removed."""
    from django.core.files.storage import default_storage

    from rag.models import Document
    from tenants.selectors import owned_list

    names = [n for n in owned_list(Document, tenant=tenant).values_list("file", flat=True) if n]
    tenant_id = tenant.pk
    tenant.delete()
    for name in names:
        default_storage.delete(name)
    with contextlib.suppress(NotImplementedError, OSError):  # empty per-tenant folders, if on disk
        root = Path(default_storage.path(f"documents/{tenant_id}"))
        for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
            folder.rmdir()
        root.rmdir()
    return len(names)


def verdict(ok: bool | None) -> str:
    return {True: "PASS", False: "FAIL", None: "n/a "}[ok]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of PDF/DOCX/TXT files")
    parser.add_argument("--limit", type=int, default=0, help="first N files (sorted); 0 = all")
    parser.add_argument(
        "--encode-sample", type=int, default=2000, help="texts for pure vs plain encoding; 0 = all"
    )
    parser.add_argument(
        "--table-sample", type=int, default=300, help="texts for the settings table; 0 = skip the table"
    )
    parser.add_argument("--keep", action="store_true", help="keep the bench tenant and its documents")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser.parse_args(argv)


def measure(args: argparse.Namespace, files: list[Path]) -> dict:
    """Run every measurement in one process and return the figures (JSON-serializable)."""
    import numpy as np
    import torch
    from django.conf import settings
    from sentence_transformers import SentenceTransformer

    from rag import services as rag_services
    from rag.ingest import embedding
    from tenants.services import tenant_create

    slug = f"bench-ingest-{time.strftime('%Y%m%d-%H%M%S')}"
    tenant = tenant_create(slug=slug, name=f"Ingest benchmark {slug[13:]}")
    try:
        case = rag_services.case_get_or_create(tenant=tenant, name="bench")
        model, load_seconds = timed_call(embedding.get_model)
        embedding.embed(["Warm-up: the Licensee shall indemnify the Licensor against all claims."] * 8)

        # 1. End to end.
        run = ingest_files(tenant=tenant, case=case, files=files, desc="ingest")
        rss_after_ingest = peak_rss_mb()

        # 2. Pure embedding of what was just written.
        texts = embedded_texts(tenant=tenant, case=case)
        sample = deterministic_sample(texts, args.encode_sample)
        if not sample:
            raise SystemExit("no chunks were written; nothing to measure")
        ours, ours_seconds = timed_call(embedding.embed, sample)

        # 3. Plain sentence-transformers, default settings.
        plain_model = SentenceTransformer(str(embedding.resolve_model_path()), device="cpu")
        plain_model.encode(sample[:8])  # warm-up, as for ours
        plain, plain_seconds = timed_call(plain_model.encode, sample)
        plain_unit = unit_rows(plain)

        # 4. Re-embedding check: the first files again, into a second case of the same tenant.
        case2 = rag_services.case_get_or_create(tenant=tenant, name="bench-reingest")
        rerun = ingest_files(tenant=tenant, case=case2, files=files[:REEMBED_FILES], desc="re-ingest")

        table_texts = sample[: args.table_sample] if args.table_sample else []
        table = settings_table(table_texts, plain_unit[: len(table_texts)]) if table_texts else []
        rss_end = peak_rss_mb()
    finally:
        if not args.keep:
            delete_tenant(tenant)

    token_counts = [len(ids) for ids in model.tokenizer(sample, truncation=False, verbose=False)["input_ids"]]
    max_tokens = model.get_max_seq_length()
    pure = len(sample) / ours_seconds
    plain_rate = len(sample) / plain_seconds
    e2e_texts = run.texts_embedded / run.seconds
    share = e2e_texts / pure if run.texts_embedded else None
    return {
        "tenant": slug,
        "kept": args.keep,
        "corpus": str(args.corpus),
        "files": len(files),
        "model": embedding.model_id(),
        "model_load_s": load_seconds,
        "batch_size": settings.EMBEDDING_BATCH_SIZE,
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "end_to_end": asdict(run)
        | {
            "documents_per_s": run.ready / run.seconds,
            "chunks_per_s": run.chunks / run.seconds,
            "texts_embedded_per_s": e2e_texts,
        },
        "sample": {
            "size": len(sample),
            "distinct_texts": len(texts),
            "seed": SAMPLE_SEED,
            "mean_words": float(np.mean([len(text.split()) for text in sample])),
            "mean_tokens": float(np.mean(token_counts)),
            "max_tokens": max_tokens,
            "truncated": sum(count > max_tokens for count in token_counts),
        },
        "pure_embed": {"seconds": ours_seconds, "chunks_per_s": pure},
        "plain": {
            "seconds": plain_seconds,
            "chunks_per_s": plain_rate,
            "max_cos_dev": max_cosine_deviation(ours, plain_unit),
        },
        "ours_over_plain": pure / plain_rate,
        "reingest": asdict(rerun),
        "targets": {
            "e2e_share_of_pure": share,
            "e2e_pass": None if share is None else share >= TARGET_E2E_SHARE,
            "no_reembedding_pass": rerun.texts_embedded == 0 and rerun.ready > 0,
            "backend_quality_pass": None,
        },
        "table_sample": len(table_texts),
        "settings_table": table,
        "peak_rss_mb": {"after_ingest": rss_after_ingest, "end": rss_end},
    }


def report(f: dict) -> list[str]:
    """The figures as a readable block."""
    run, rerun, sample, targets = f["end_to_end"], f["reingest"], f["sample"], f["targets"]
    seconds = run["seconds"]
    embed_seconds = run["stage_seconds"]["embed"]
    pure = f["pure_embed"]["chunks_per_s"]
    lines = [
        "",
        f"Ingestion benchmark: tenant {f['tenant']} ({'kept' if f['kept'] else 'deleted'})",
        f"corpus {f['corpus']} · {f['files']} files · model {f['model']} (loaded in "
        f"{f['model_load_s']:.1f} s, not timed) · batch {f['batch_size']} · torch threads "
        f"{f['torch_threads']} of {f['cpu_count']} CPUs",
        "",
        "1. End to end (read → document_upload → document_ingest → ready)",
        f"   documents   {run['ready']} ready, {run['duplicates']} duplicate, {len(run['failures'])} failed "
        f"in {seconds:.1f} s → {run['documents_per_s']:.2f} documents/s",
        f"   chunks      {run['chunks']} written → {run['chunks_per_s']:.1f} chunks/s",
        f"   embedded    {run['texts_embedded']} texts in {run['embed_calls']} calls → "
        f"{run['texts_embedded_per_s']:.1f} texts/s",
    ]
    if skipped := run["chunks"] - run["texts_embedded"]:
        lines.append(
            f"               ({skipped} chunks not embedded: reused a stored vector or repeated a text)"
        )
    lines += [f"   failed: {name}: {reason}" for name, reason in run["failures"]]
    lines.append(
        f"   split       embedding {embed_seconds:.1f} s ({embed_seconds / seconds:.1%}) · everything "
        f"else {seconds - embed_seconds:.1f} s ({1 - embed_seconds / seconds:.1%})"
    )
    for name in STAGES:
        stage = run["stage_seconds"][name]
        lines.append(f"     {name:<13}{stage:8.2f} s {stage / seconds:6.1%}   {STAGE_NOTES[name]}")
    cpu = f"   CPU         this process {run['cpu_self_s'] / seconds:.2f} of {f['cpu_count']} cores"
    if run["cpu_others_s"] is not None:
        others = run["cpu_others_s"] / seconds
        cpu += f"; everything else on the machine {others:.2f} cores (PostgreSQL, other jobs)"
        if others > 0.25:
            cpu += "\n               WARNING: the machine was busy; the model got less than its cores"
    lines.append(cpu)
    lines += [
        "",
        f"2. Pure embedding: embedding.embed on {sample['size']} of {sample['distinct_texts']} distinct "
        f"chunk texts (seed {sample['seed']})",
        f"   {sample['size']} texts in {f['pure_embed']['seconds']:.1f} s → {pure:.1f} chunks/s "
        f"(mean {sample['mean_words']:.0f} words, {sample['mean_tokens']:.0f} tokens; "
        f"{sample['truncated']} over the {sample['max_tokens']}-token limit, truncated)",
        "",
        "3. Plain sentence-transformers: SentenceTransformer(path, device='cpu').encode(sample), defaults",
        f"   {sample['size']} texts in {f['plain']['seconds']:.1f} s → {f['plain']['chunks_per_s']:.1f} "
        f"chunks/s; ours/plain = {f['ours_over_plain']:.3f}; max 1-cos {f['plain']['max_cos_dev']:.1e}",
        "",
        f"   re-ingest   {rerun['ready']} ready, {len(rerun['failures'])} failed, {rerun['chunks']} chunks "
        f"into a second case in {rerun['seconds']:.1f} s; {rerun['texts_embedded']} texts sent to the model",
        *(f"   failed: {name}: {reason}" for name, reason in rerun["failures"]),
        "",
        "4. Targets",
    ]
    share = targets["e2e_share_of_pure"]
    if share is None:
        lines.append(
            f"   {verdict(None)} end-to-end ≥ {TARGET_E2E_SHARE:.0%} of pure embedding: nothing embedded"
        )
    else:
        lines.append(
            f"   {verdict(targets['e2e_pass'])} end-to-end {run['texts_embedded_per_s']:.1f} texts "
            f"embedded/s = {share:.1%} of pure embedding {pure:.1f} chunks/s (target ≥ "
            f"{TARGET_E2E_SHARE:.0%}; chunks written/s = {run['chunks_per_s'] / pure:.1%})"
        )
    lines += [
        f"   {verdict(targets['no_reembedding_pass'])} no re-embedding: {rerun['texts_embedded']} texts "
        f"sent to the model re-ingesting {rerun['files']} files ({rerun['chunks']} chunks) into case 2",
        f"   {verdict(None)} fastest backend within one point of plain on retrieval quality: n/a (needs the "
        f"retrieval evaluation); current backend (sentence-transformers, torch fp32) runs at "
        f"{f['ours_over_plain']:.2f}x plain speed",
    ]
    if table := f["settings_table"]:
        width = max(len(row["setting"]) for row in table)
        best = max(table, key=lambda row: row["chunks_per_s"])
        lines += [
            "",
            f"   Equivalent settings of embed, on the first {f['table_sample']} texts of the sample:",
            f"     {'setting':<{width}}  chunks/s  max 1-cos vs plain",
            *(
                f"     {row['setting']:<{width}}  {row['chunks_per_s']:8.1f}  {row['max_cos_dev']:.1e}"
                for row in table
            ),
            f"     fastest: {best['setting']} "
            f"({best['chunks_per_s'] / table[0]['chunks_per_s']:.2f}x the configured one)",
        ]
    rss = f["peak_rss_mb"]
    lines += [
        "",
        f"5. Peak memory of this process (PostgreSQL not included): {rss['after_ingest']:.0f} MB after "
        f"ingest, {rss['end']:.0f} MB at the end (a second, plain model loaded)",
    ]
    return lines


def main(argv=None) -> int:
    args = parse_args(argv)
    files = requested_files(args.corpus, args.limit)
    if not files:
        return 2
    setup_django()
    figures = measure(args, files)
    print("\n".join(report(figures)))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
