"""manage.py evaluate legalbench --corpus DIR --queries FILE [--k 1,2,4,…] [--mode M] [--json OUT]
manage.py evaluate natural --base URL --key KEY [--runner run.py] [--questions F] [--corpus-root D]
                           [--mode sync|agentic] [--json OUT] [--kinds K,…] [--limit N]

legalbench: LegalBench-RAG precision@k and recall@k of Lexrag's retrieval (definitions in
rag.evaluation.legalbench). The corpus is indexed into an isolated evaluation tenant, reused while
the index settings match. A database with unapplied migrations (a fresh clone's) is migrated first.

natural: the natural-question benchmark (rag.evaluation.natural) against an app already serving at
--base; it serves nothing itself and exits with the runner's exit status.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from tqdm import tqdm

from rag.evaluation import legalbench, natural, runner
from rag.retrieval.hybrid import MODES


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise CommandError(f"--k must be comma-separated positive integers, got {text!r}") from exc
    if not ks or ks[0] < 1 or ks[-1] > 100:
        raise CommandError("--k values must be between 1 and 100")
    return ks


class Command(BaseCommand):
    help = "Evaluate retrieval (LegalBench-RAG precision@k / recall@k) or answers (the natural-question set)."

    def add_arguments(self, parser):
        benchmarks = parser.add_subparsers(dest="benchmark", required=True, metavar="{legalbench,natural}")
        self._legalbench_arguments(
            benchmarks.add_parser("legalbench", help="LegalBench-RAG retrieval metrics")
        )
        self._natural_arguments(
            benchmarks.add_parser("natural", help="the natural-question set through a serving app's API")
        )

    @staticmethod
    def _legalbench_arguments(parser):
        parser.add_argument("--corpus", required=True, help="directory of the benchmark's documents")
        parser.add_argument("--queries", required=True, help="LegalBench-RAG query file (JSON)")
        parser.add_argument("--k", default=",".join(map(str, legalbench.DEFAULT_KS)))
        parser.add_argument(
            "--mode",
            default="hybrid",
            choices=[*MODES, runner.AGENTIC],
            help="a search mode, or agentic: the evidence of rag.agent's loop (routing = the doc_id filter)",
        )
        parser.add_argument(
            "--min-similarity",
            type=float,
            default=0.0,
            help="similarity threshold for this run (default 0: the metric scores k passages)",
        )
        parser.add_argument("--json", dest="json_out", help="also write the figures to this file")

    @staticmethod
    def _natural_arguments(parser):
        parser.add_argument(
            "--base", required=True, help="the serving app's base URL, e.g. http://127.0.0.1:8000"
        )
        parser.add_argument(
            "--key", required=True, help='an API key that may upload ("Api-Key lx_..." or lx_...)'
        )
        paths = (
            ("--runner", "runner_path", natural.DEFAULT_RUNNER, "the runner"),
            ("--questions", "questions", natural.DEFAULT_QUESTIONS, "the question set"),
            ("--corpus-root", "corpus_root", natural.DEFAULT_CORPUS_ROOT, "the directory of the set's files"),
        )
        for flag, dest, default, what in paths:
            parser.add_argument(
                flag,
                dest=dest,
                metavar="PATH",
                type=Path,
                default=natural.project_path(default),
                help=f"{what} (default: {default} from the project's root)",
            )
        parser.add_argument("--mode", default="sync", choices=natural.MODES)
        parser.add_argument("--json", dest="json_out", help="the runner writes every question's record here")
        parser.add_argument("--kinds", help="only these kinds, comma-separated (named,document,case,...)")
        parser.add_argument("--limit", type=int, help="only the first N questions (after --kinds)")

    def handle(self, *args, benchmark, **options):
        if benchmark == "natural":
            self._natural(**options)
        else:
            self._legalbench(**options)

    def _natural(
        self, *, runner_path, base, key, questions, corpus_root, mode, json_out, kinds, limit, **options
    ):
        """Run the natural-question runner in a child process (its output goes straight to this
        one's) and exit with its status: 0, 1 when a request failed, 2 when its set-up failed."""
        paths = {"runner": runner_path, "question file": questions, "corpus root": corpus_root}
        for what, path in paths.items():
            if not Path(path).exists():
                raise CommandError(f"No such {what}: {path}")
        run = natural.NaturalRun(
            Path(runner_path), base, key, Path(questions), Path(corpus_root), mode, json_out, kinds, limit
        )
        returncode = subprocess.call(run.argv(sys.executable))
        if returncode:
            raise CommandError(
                f"the natural-question runner exited with status {returncode}", returncode=returncode
            )

    def _migrate_if_needed(self) -> None:
        """Apply unapplied migrations first: the evaluation tenant lives in the app's database, and
        on a fresh clone that database has no tables yet."""
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if pending:
            self.stdout.write(f"Applying {len(pending)} database migrations first (as `manage.py migrate`).")
            call_command("migrate", interactive=False, verbosity=0)

    def _legalbench(self, *, corpus, queries, k, mode, min_similarity, json_out, **options):
        ks = _ks(k)
        corpus_dir, queries_file = Path(corpus), Path(queries)
        if not corpus_dir.is_dir():
            raise CommandError(f"No such corpus directory: {corpus}")
        if not queries_file.is_file():
            raise CommandError(f"No such query file: {queries}")
        try:
            benchmark_queries = legalbench.load_queries(queries_file)
        except (ValueError, KeyError, TypeError) as exc:
            raise CommandError(f"Not a LegalBench-RAG query file: {exc}") from exc
        self._migrate_if_needed()
        started = time.monotonic()
        indexed = runner.ingest_corpus(corpus_dir, progress=tqdm)
        for path, reason in indexed.failed:
            self.stderr.write(f"  not indexed: {path}: {reason}")
        runs = runner.run_queries(
            indexed,
            benchmark_queries,
            k=max(ks),
            mode=mode,
            similarity_threshold=min_similarity,
            progress=tqdm,
        )
        figures = legalbench.score([(run.retrieved, run.query.gold) for run in runs], ks)
        report = {
            "k": figures,
            "queries": len(runs),
            "settings": {
                **runner.corpus_settings(),
                "mode": mode,
                "min_similarity": min_similarity,
                "query_expansion": settings.RAG_QUERY_EXPANSION,
                "candidate_pool": settings.RAG_CANDIDATE_POOL,
                "documents": len(indexed.paths),
                "tenant": indexed.tenant.slug,
                "routing_accuracy": round(runner.routing_accuracy(runs), 2),
                "seconds": round(time.monotonic() - started, 1),
            },
        }
        self.stdout.write(f"LegalBench-RAG, {len(runs)} queries, {len(indexed.paths)} documents, mode {mode}")
        self.stdout.write(f"{'k':>4}  {'precision %':>11}  {'recall %':>8}")
        for key, values in figures.items():
            self.stdout.write(f"{key:>4}  {values['precision']:>11.2f}  {values['recall']:>8.2f}")
        self.stdout.write(
            f"routing: first routed document is the gold one for {report['settings']['routing_accuracy']}%"
        )
        if json_out:
            Path(json_out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            self.stdout.write(f"wrote {json_out}")
