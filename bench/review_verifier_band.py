"""bench/review_verifier_band.py: what a reader of the unsure verdicts could gain, and what it costs.

    .venv/bin/python bench/review_verifier_band.py --questions ../shared/eval/cuad-review/dev.json \
        --corpus-root ../shared/eval

The clause verifier (rag.review.verifier, RAG_REVIEW_VERIFIER=llm) sends Claude the (document,
clause type) pairs whose probability lies in [floor, SURE). No model API is reachable here, so its
real accuracy cannot be measured; this script bounds it. On the clause model's held-out scores
(each matter scored by probes trained on the other three, as `manage.py review_train` does), it
replaces every verdict in the band by the lawyers' label (a reader that is always right) or by the
label flipped at random with a given error rate, and prints list precision/recall/F1 and empty
lists as cuad-review scores them, with the share of pairs in the band and how many documents would
need a request.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import setup_django

FLOORS = (0.05, 0.1, 0.2)
ERRORS = (0.0, 0.1, 0.2)
SEEDS = 20  # random readers averaged per error rate


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", required=True)
    parser.add_argument("--corpus-root", required=True)
    args = parser.parse_args()
    setup_django()
    from rag.review import train
    from rag.review.lexicon import Lexicon
    from rag.review.model import SURE, ClauseModel

    corpus = train.load(Path(args.questions), Path(args.corpus_root))
    held_out = train.held_out_scores(corpus, functools.partial(train.lexical_scores, corpus), progress=_quiet)
    combiner, threshold, found = train.calibrated(corpus, held_out)
    model = ClauseModel(Lexicon((), np.zeros(0)), {}, combiner, threshold, "")
    probability = {item: model.probability(score) for item, score in held_out.items()}
    print(f"{'reader':34} {'P':>6} {'R':>6} {'F1':>6} {'empty':>6} {'in band':>8} {'docs':>5}")
    _row("clause model alone (no reader)", found, 0, 0)
    for floor in FLOORS:
        band = [item for item, p in probability.items() if floor <= p < SURE]
        documents = len({file for file, _ in band})
        for error in ERRORS:
            runs = []
            for seed in range(SEEDS if error else 1):
                rng = random.Random(seed)  # noqa: S311 (a simulated reader, not a secret)
                read = {
                    item: (corpus.labels[item] != (rng.random() < error)) for item in band
                }  # the label, flipped at the error rate
                scores = {
                    item: (_logit(model, 0.99 if read[item] else 0.01) if item in read else score)
                    for item, score in held_out.items()
                }
                runs.append(train.figures(dataclasses.replace(model, threshold=threshold), corpus, scores))
            mean = {
                key: float(np.mean([run[key] for run in runs]))
                for key in ("list_precision", "list_recall", "list_empty_ok")
            }
            _row(f"floor {floor:.2f}, reader wrong {100 * error:.0f} %", mean, len(band), documents)


def _logit(model, probability: float) -> float:
    """The probe score the model calibrates to `probability`."""
    a, bias = model.combiner
    return (np.log(probability / (1 - probability)) - bias) / a


def _row(name: str, found: dict, band: int, documents: int) -> None:
    p, r = found["list_precision"], found["list_recall"]
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    empty = found["list_empty_ok"] or 0.0
    print(
        f"{name:34} {100 * p:6.1f} {100 * r:6.1f} {100 * f1:6.1f} {100 * empty:6.1f} {band:8} {documents:5}"
    )


def _quiet(message: str) -> None:
    pass


if __name__ == "__main__":
    main()
