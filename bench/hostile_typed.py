#!/usr/bin/env python
# Typed prompt-injection benchmark (issue #20, item 3): prints figures, it is not a test.
#
# What it measures: how many of the public hostile dev split's direct prompts (what a user could
# type as a question) the query sanitizer flags, and how many ordinary legal questions it flags
# by mistake. Each prompt is scanned by the real scan (`rag.pipeline.sanitize.injection_findings`,
# query scope: what `sanitize` and the API's injection budget run) in three forms: in full, cut to
# its first 500 characters and cut to its last 500 (RAG_MAX_QUERY_LENGTH: what the API accepts),
# once with the rules alone and once with the learned detector after them (issue #33,
# `rag.security.injection_model`: in-sample on this split, see `manage.py hostile_train` for its
# cross-validation), with the detector's cost per ordinary question.
# Target: >= 90 % flagged in every form, 0 legal questions flagged.
"""Typed prompt-injection benchmark: flagged share of the dev split's direct prompts, per source
and form, and false positives on the ordinary legal questions.

    .venv/bin/python bench/hostile_typed.py [--dev FILE] [--questions FILE] [--limit N] [--out TXT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import REPO_ROOT, setup_django

# ../shared beside the main checkout, ../../shared beside a worktree under wt/
_DEV_CANDIDATES = [
    root / "shared" / "eval" / "hostile" / "dev.jsonl" for root in (REPO_ROOT.parent, REPO_ROOT.parent.parent)
]
DEFAULT_DEV = next((path for path in _DEV_CANDIDATES if path.exists()), _DEV_CANDIDATES[0])
DEFAULT_QUESTIONS = REPO_ROOT / "tests" / "security" / "legal_questions.json"
DEFAULT_NATURAL = DEFAULT_DEV.parent.parent / "natural" / "dev.json"  # ordinary questions (issue #33)
FORMS = ("full", "first", "last")


def _forms(text: str, limit: int) -> dict[str, str]:
    return {"full": text, "first": text[:limit], "last": text[-limit:]}


def read_direct_prompts(path: Path) -> list[dict]:
    """The dev split's rows of kind "direct"."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if row["kind"] == "direct"]


def half(prompt: dict) -> str:
    """ "A" or "B": a fixed split of the prompts in two, for cross-validation (issue #33: rules
    written from one half's misses are measured on the other)."""
    digest = hashlib.sha1(f"{prompt['source']}{prompt['ref']}".encode()).hexdigest()  # noqa: S324
    return "AB"[int(digest, 16) % 2]


def measure(prompts: list[dict], questions: list[str], limit: int, learned: bool) -> tuple[dict, list[str]]:
    """Per source and per half: prompt count and flagged count per form and in all forms; the
    ordinary questions flagged, with their findings. `learned`: the learned detector runs after
    the rules."""
    from functools import partial

    from rag.pipeline.sanitize import injection_findings as scan

    injection_findings = partial(scan, learned=learned)
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for prompt in prompts:
        flagged = {
            form: bool(injection_findings(text)) for form, text in _forms(prompt["text"], limit).items()
        }
        for row in (table[prompt["source"]], table[f"half {half(prompt)}"]):
            row["n"] += 1
            for form, hit in flagged.items():
                row[form] += hit
            row["all"] += all(flagged.values())
    false_positives = [
        f"{question}  {injection_findings(question)}"
        for question in questions
        if injection_findings(question)
    ]
    return table, false_positives


def render(table: dict, false_positives: list[str], n_questions: int, limit: int) -> str:
    """A Markdown table per source plus the total, then the false positives."""
    lines = [
        f"| source | prompts | flagged in full | first {limit} chars | last {limit} chars | all three |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    total: dict[str, int] = defaultdict(int)
    for source, row in sorted(table.items()):
        if source.startswith("half "):
            continue
        for key, value in row.items():
            total[key] += value
        lines.append(_row(source, row))
    lines.append(_row("**all direct prompts**", total))
    lines.extend(
        _row(f"cross-validation {name}", row)
        for name, row in sorted(table.items())
        if name.startswith("half ")
    )
    lines.append("")
    lines.append(
        "Ordinary questions flagged (legal questions and natural dev questions): "
        f"{len(false_positives)} of {n_questions}"
    )
    lines.extend(f"  - {line}" for line in false_positives)
    return "\n".join(lines)


def _row(label: str, row: dict) -> str:
    cells = [f"{100 * row[key] / row['n']:.1f} % ({row[key]})" for key in (*FORMS, "all")]
    return f"| {label} | {row['n']} | " + " | ".join(cells) + " |"


def model_cost(questions: list[str]) -> str:
    """The learned detector's time per ordinary question (one embedding and a dot product)."""
    from rag.security.injection_model import model_score

    model_score("warm-up question")
    times = []
    for question in questions:
        started = time.perf_counter()
        model_score(question)
        times.append(1000 * (time.perf_counter() - started))
    times.sort()
    return (
        f"Learned detector per ordinary question: median {statistics.median(times):.1f} ms, "
        f"p95 {times[int(0.95 * (len(times) - 1))]:.1f} ms (n={len(times)}, one thread)"
    )


def main() -> None:
    """Parse the arguments, measure, print (and write) the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV, help="hostile dev split (JSON lines)")
    parser.add_argument(
        "--questions", type=Path, default=DEFAULT_QUESTIONS, help="ordinary legal questions (JSON)"
    )
    parser.add_argument(
        "--limit", type=int, default=500, help="characters kept from either end (query limit)"
    )
    parser.add_argument(
        "--natural",
        type=Path,
        default=DEFAULT_NATURAL,
        help="natural-question dev split (JSON), its questions",
    )
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args()
    setup_django()
    prompts = read_direct_prompts(args.dev)
    questions = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]
    if args.natural.exists():
        natural = json.loads(args.natural.read_text(encoding="utf-8"))["questions"]
        questions += [case["question"] for case in natural]
    parts = []
    for learned, title in ((False, "Rules alone"), (True, "Rules, then the learned detector (issue #33)")):
        table, false_positives = measure(prompts, questions, args.limit, learned)
        parts.append(f"{title}:\n\n" + render(table, false_positives, len(questions), args.limit))
    parts.append(model_cost(questions))
    report = "\n\n".join(parts)
    print(report)
    if args.out:
        args.out.write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
