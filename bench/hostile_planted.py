#!/usr/bin/env python
# Planted-instruction benchmark: prints figures, it is not a test.
#
# What it measures: how well the document-scope injection scan
# (`rag.pipeline.sanitize.injection_findings(scope="document")`, which runs
# `rag.security.planted`) flags passages that carry instructions, and how rarely it flags ordinary
# contract passages.
#   (a) Detection: each `indirect` payload of the hostile dev split
#       (`../shared/eval/hostile/dev.jsonl`) planted as its own paragraph after a clause of an
#       ordinary CUAD contract (a different contract for each payload, the clause a seeded choice
#       among the paragraph breaks of its middle half), the contract chunked with the real chunker
#       (`rag.ingest.chunking.chunk_text`, RAG_CHUNK_SIZE / RAG_CHUNK_OVERLAP). A payload counts as
#       detected when a passage holding any of it is flagged.
#   (b) False alarms: every passage of the 510 contracts of `../shared/eval/cuad-full-corpus/`,
#       chunked the same way (no embedding, so no cut for the embedding model's window: the count
#       differs slightly from an ingested corpus), scanned; the share flagged, and a few flagged
#       passages printed so they can be read.
#
# Usage: .venv/bin/python bench/hostile_planted.py [--examples 8] [--seed 20]

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import REPO_ROOT, setup_django

SHARED = REPO_ROOT.parent.parent / "shared" / "eval"
if not SHARED.exists():
    SHARED = Path("/work/shared/eval")
DEV = SHARED / "hostile" / "dev.jsonl"
CORPUS = SHARED / "cuad-full-corpus" / "cuad"
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def _contracts() -> list[tuple[str, str]]:
    return [(path.name, path.read_text(errors="replace")) for path in sorted(CORPUS.glob("*.txt"))]


def _payloads() -> list[str]:
    rows = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    return [row["text"] for row in rows if row["kind"] == "indirect"]


def _chunks(text: str):
    from django.conf import settings

    from rag.ingest.chunking import chunk_text

    return chunk_text(text, size=settings.RAG_CHUNK_SIZE, overlap=settings.RAG_CHUNK_OVERLAP)


def _plant(contract: str, payload: str, rng: random.Random) -> tuple[str, int, int]:
    """`contract` with `payload` as its own paragraph after a clause; the payload's span."""
    breaks = [m.start() for m in _PARAGRAPH_BREAK.finditer(contract)]
    quarter = len(contract) // 4
    middle = [b for b in breaks if quarter <= b <= 3 * quarter] or breaks or [len(contract)]
    at = rng.choice(middle)
    planted = f"{contract[:at]}\n\n{payload}{contract[at:]}"
    return planted, at + 2, at + 2 + len(payload)


def detection(contracts, payloads, rng) -> tuple[int, list[str]]:
    """How many payloads are flagged once planted, and the ones that are not."""
    from rag.pipeline.sanitize import injection_findings

    missed = []
    for payload, (_, contract) in zip(payloads, rng.sample(contracts, len(payloads)), strict=True):
        text, start, end = _plant(contract, payload, rng)
        holding = [span for span in _chunks(text) if span.start < end and span.end > start]
        if not any(injection_findings(span.text, scope="document") for span in holding):
            missed.append(payload)
    return len(payloads) - len(missed), missed


def false_alarms(contracts) -> tuple[int, list[tuple[str, str, list[str]]], Counter]:
    """Passages scanned, the flagged ones (file, text, findings), and findings by name."""
    from rag.pipeline.sanitize import injection_findings

    total, flagged, names = 0, [], Counter()
    for name, contract in contracts:
        for span in _chunks(contract):
            total += 1
            found = injection_findings(span.text, scope="document")
            if found:
                flagged.append((name, span.text, found))
                names.update(found)
    return total, flagged, names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=8, help="flagged corpus passages to print")
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    setup_django()
    rng = random.Random(args.seed)  # noqa: S311  (a seeded sample, not a secret)
    contracts, payloads = _contracts(), _payloads()

    started = time.perf_counter()
    detected, missed = detection(contracts, payloads, rng)
    print(f"(a) planted payloads flagged: {detected}/{len(payloads)} = {detected / len(payloads):.1%}")
    for payload in missed:
        print(f"    missed: {payload[:100]!r}")

    total, flagged, names = false_alarms(contracts)
    elapsed = time.perf_counter() - started
    share = len(flagged) / total
    print(f"(b) corpus passages flagged: {len(flagged)}/{total} = {share:.2%} ({len(contracts)} contracts)")
    print(f"    by finding: {dict(names.most_common())}")
    for name, text, found in rng.sample(flagged, min(args.examples, len(flagged))):
        print(f"    --- {name[:70]} {found}\n    {' '.join(text.split())[:400]}")
    print(f"({elapsed:.0f} s)")


if __name__ == "__main__":
    main()
