#!/usr/bin/env python
# Direct-answer benchmark, given the lawyers' clause: prints figures, it is not a test.
#
# What it measures: for each `value` question of ../shared/eval/cuad-review/dev.json (one per
# document and wording), whether the offline answer's first sentence (`rag.answers.direct.opening`)
# plus the quote of the lawyers' own clause states the lawyers' value, scored with cuad-review's own
# `states_value`. Search is taken out: the clause is the gold span, and the passages the
# `document_dates` stage would add (the document's opening and each passage holding a date the
# document gives itself) are given too. So a figure here is the ceiling the served benchmark can
# reach when search finds the clause; the served run (`serve_and_run.py --bench cuad-review`) is
# the one that counts. No database, no server, about 10 seconds.
#
# Usage: .venv/bin/python bench/direct_answers.py [--category "Expiration Date"] [--misses]

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import REPO_ROOT, setup_django

SHARED = REPO_ROOT.parent.parent / "shared" / "eval"
if not SHARED.exists():
    SHARED = Path("/work/shared/eval")
REVIEW = SHARED / "cuad-review"
CORPUS = SHARED / "cuad-full-corpus" / "cuad"
OPENING_CHARS = 2500  # the document's opening passage
AROUND = 300  # characters of a passage around the clause or a date


@dataclass(frozen=True)
class Passage:
    citation_id: str
    document_id: int
    text: str
    chunk_number: int | None = None


def _scorer():
    spec = importlib.util.spec_from_file_location("cuad_review_run", REVIEW / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.states_value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--category", help="only this category (e.g. 'Expiration Date')")
    parser.add_argument("--misses", action="store_true", help="print each miss")
    args = parser.parse_args()
    setup_django()
    from rag.answers.dates import anchors
    from rag.answers.direct import Quote, opening

    states_value = _scorer()
    questions = json.loads((REVIEW / "dev.json").read_text())["questions"]
    seen, right, total = set(), Counter(), Counter()
    for q in questions:
        key = (q["scope"].get("document"), q["question"])
        if q["kind"] != "value" or not q.get("gold") or key in seen:
            continue
        if args.category and q["category"] != args.category:
            continue
        seen.add(key)
        text = (CORPUS / q["scope"]["document"].split("/", 1)[1]).read_text(errors="replace")
        start, end = q["gold"][0]["span"]
        clause = Passage("1", 1, text[max(0, start - AROUND) : end + AROUND], 5)
        dating = [Passage("2", 1, text[:OPENING_CHARS], 1)] + [
            Passage(str(3 + n), 1, text[max(0, a.start - AROUND) : a.end + AROUND], 3)
            for n, a in enumerate(anchors(text).values())
            if a.start >= OPENING_CHARS - 500
        ]
        quote = Quote(clause, " ".join(text[start:end].split()))
        found = opening(q["question"], [quote], [clause, *dating])
        sentence = found.sentence if found else ""
        ok = states_value(f"{sentence} {quote.text}", q["value"])
        total[q["category"]] += 1
        right[q["category"]] += ok
        if args.misses and not ok:
            print(f"MISS {q['category']} | {q['value']['value']} | {q['question']} | {sentence[:160]}")
            print(f"     clause: {quote.text[:240]}")
    print(f"{'category':<38} {'stated':>8} {'of':>4}")
    for category in sorted(total):
        share = 100 * right[category] / total[category]
        print(f"{category:<38} {right[category]:>8} {total[category]:>4}  {share:5.1f} %")
    print(f"{'all':<38} {sum(right.values()):>8} {sum(total.values()):>4}")


if __name__ == "__main__":
    main()
