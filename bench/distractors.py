#!/usr/bin/env python
# The answer benchmarks among a firm's archive (issue #37, item 1), a benchmark that prints figures.
#
# 1. ../shared/eval/natural and ../shared/eval/cuad-review, served (serve_and_run.py), on the small
#    matters they upload into the demo firm;
# 2. the rest of ../shared/eval/cuad-full-corpus (510 contracts) ingested into the same firm as one
#    more case, "CUAD archive" (`manage.py ingest --skip-known`: each contract once; run again, it
#    adds nothing, so the archive is ingested once and reused);
# 3. both benchmarks again, now with ~400 more contracts in the firm;
# 4. the paired table: each figure before and after, and whether it held within 3 points.
# A step whose JSON is already in --out is not run again (delete it to re-measure).
"""The natural and matter-review benchmarks, small matters against the same among the archive.

.venv/bin/python bench/distractors.py [--out DIR] [--compare-only]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
EVAL = REPO_ROOT.parent / "shared" / "eval"
SERVE_AND_RUN = EVAL / "natural" / "serve_and_run.py"
ARCHIVE = EVAL / "cuad-full-corpus" / "cuad"
VENV_PYTHON = str(REPO_ROOT / ".venv" / "bin" / "python")
BENCHMARKS = ("natural", "review")
TOLERANCE = 3.0  # points, issue #37

# (benchmark, summary section, field, label)
FIGURES = [
    ("natural", "named", "hit_at_1", "natural named hit@1"),
    ("natural", "document", "hit_at_1", "natural document hit@1"),
    ("natural", "case", "hit_at_1", "natural case hit@1"),
    ("natural", "named", "hit_any", "natural named hit@any"),
    ("natural", "case", "hit_any", "natural case hit@any"),
    ("natural", "unanswerable", "not_found_correct", "natural not found"),
    ("natural", "ambiguous", "clarify_or_each", "natural ambiguous named or each"),
    ("review", "overall", "value_ok", "review value stated"),
    ("review", "overall", "yes_ok", "review presence yes_ok"),
    ("review", "overall", "no_ok", "review presence no_ok"),
    ("review", "overall", "list_precision", "review list precision"),
    ("review", "overall", "list_recall", "review list recall"),
    ("review", "overall", "list_empty_ok", "review list empty 'none'"),
]


def run_benchmark(name: str, out: Path) -> None:
    if out.exists():
        print(f"{name}: reusing {out}", flush=True)
        return
    command = [sys.executable, str(SERVE_AND_RUN), "--json", str(out)]
    if name == "review":
        command[2:2] = ["--bench", "cuad-review"]
    print(f"{name}: {' '.join(command)}", flush=True)
    subprocess.run(command, cwd=REPO_ROOT, check=True, stdout=subprocess.DEVNULL)


def archive_present() -> bool:
    """Whether the demo firm already holds the archive case (then a "small" run would not be)."""
    check = (
        "from rag.models import Case; "
        "print(Case.objects.filter(tenant__slug='demo-law-firm', name='CUAD archive').exists())"
    )
    command = [VENV_PYTHON, "manage.py", "shell", "-c", check]
    shell = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True)
    return shell.stdout.strip().endswith("True")


def ingest_archive(log: Path) -> None:
    started = time.monotonic()
    command = [
        VENV_PYTHON, "manage.py", "ingest", "--tenant", "demo-law-firm",
        "--case", "CUAD archive", "--doc-type", "contract", "--skip-known", str(ARCHIVE),
    ]  # fmt: skip
    print(f"archive: {' '.join(command)}", flush=True)
    with log.open("w") as handle:
        subprocess.run(command, cwd=REPO_ROOT, check=True, stdout=handle, stderr=subprocess.STDOUT)
    print(f"archive: {time.monotonic() - started:.0f} s; {log.read_text().strip().splitlines()[-1]}")


def figure(summary: dict, section: str, field: str) -> float | None:
    part = summary["overall"] if section == "overall" else summary["by_kind"].get(section, {})
    value = part.get(field)
    return None if value is None else 100 * value


def compare(out: Path) -> str:
    runs = {
        (name, phase): json.loads((out / f"{name}-{phase}.json").read_text())["summary"]
        for name in BENCHMARKS
        for phase in ("small", "archive")
    }
    lines = [f"{'figure (%)':<36} {'small':>7} {'archive':>8} {'change':>7}  within {TOLERANCE:g}"]
    for name, section, field, label in FIGURES:
        small = figure(runs[name, "small"], section, field)
        among = figure(runs[name, "archive"], section, field)
        if small is None or among is None:
            continue
        change = among - small
        held = "yes" if change >= -TOLERANCE else "NO"
        lines.append(f"{label:<36} {small:7.1f} {among:8.1f} {change:+7.1f}  {held}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "var" / "distractors")
    parser.add_argument("--compare-only", action="store_true", help="only print the paired table")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.chdir(REPO_ROOT)
    if not args.compare_only:
        missing = [name for name in BENCHMARKS if not (args.out / f"{name}-small.json").exists()]
        if missing and archive_present():
            sys.exit(f"the firm already holds the archive: {missing} cannot be measured on small matters")
        for name in BENCHMARKS:
            run_benchmark(name, args.out / f"{name}-small.json")
        ingest_archive(args.out / "archive-ingest.log")
        for name in BENCHMARKS:
            run_benchmark(name, args.out / f"{name}-archive.json")
    print(compare(args.out))


if __name__ == "__main__":
    main()
