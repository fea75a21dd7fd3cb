"""Training and cross-validation of the learned planted-instruction detector (`planted_model`).

Data (`load`): each text is reduced to its candidate sentences (`planted.instruction_candidates`),
the only sentences the detector ever scores.
- Positives: the `indirect` payloads of the public hostile dev split (BIPIA: task switches, orders
  about the reply, code to add), grouped by BIPIA category, and the hand-written shapes of
  `tests/security/planted_shapes.json` (group "hand-written"). A payload weighs 1 over its sentences.
- Negatives: every candidate sentence of the 510 contracts of `cuad-full-corpus` (about 7 % of
  their sentences: consumer terms in "you", exhibits of software specifications, signature
  blocks) and the ordinary contract and correspondence sentences of `planted_shapes.json` (letters,
  notices and e-mails ask a person to act: "Please sign and return a copy of this letter"). Both
  classes weigh the same.

The threshold (`threshold_for`) is the score that at most `FALSE_ALARM_RATE` of the contract
sentences reach when scored out of sample (5 folds by contract, inside the training part).

Cross-validation (`cross_validate`) mimics other samples of other attacks: **by category**, the
payloads of whole BIPIA categories held out (6 folds, a sixth of the contracts held out with
them); **payloads held out**, other samples of the same categories, as a held-out set of the
same corpora holds (random 6-fold); and **hand-written held out**, the model trained on the dev
split alone and tried on the shapes written by hand. The rules' figures are in-sample (they were
written on both sets); the model's are not.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.security.injection_model import InjectionModel
from rag.security.planted import instruction_candidates, planted_findings

PROBE_C = 1.0
# Share of contract sentences (candidates) scored out of sample allowed to reach the threshold.
FALSE_ALARM_RATE = 0.002
HAND_WRITTEN = "hand-written"
SEED = 33
# A hand-written ordinary sentence stands for a genre CUAD lacks (letters, e-mails): it weighs as
# much as this many contract sentences.
WRITTEN_NEGATIVE_WEIGHT = 5.0


@dataclass
class Example:
    """A planted payload (`label` 1) or a contract's text (0), reduced to its candidate sentences."""

    group: str  # BIPIA category, "hand-written", or the contract's file / "ordinary"
    label: int
    sentences: list[str]
    text: str  # as planted, for the rules


def load(dev: Path, shapes_file: Path, corpus: Path) -> list[Example]:
    """The examples (see the module docstring)."""
    examples = []
    for line in dev.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else None
        if row and row["kind"] == "indirect":
            examples.append(_example(row["source"], 1, row["text"]))
    shapes = json.loads(shapes_file.read_text(encoding="utf-8"))
    examples += [_example(HAND_WRITTEN, 1, text) for text in shapes["shapes"].values()]
    examples += [_example("ordinary", 0, text) for text in shapes["ordinary"] + shapes["correspondence"]]
    for path in sorted(corpus.glob("*.txt")):
        examples.append(_example(path.name, 0, path.read_text(errors="replace")))
    return [example for example in examples if example.sentences]


def _example(group: str, label: int, text: str) -> Example:
    return Example(group, label, instruction_candidates(text), text)


def embed_all(examples: list[Example], embed: Callable, progress=print) -> dict[str, np.ndarray]:
    """Every distinct candidate sentence's embedding."""
    wanted = list(dict.fromkeys(s for example in examples for s in example.sentences))
    vectors: dict[str, np.ndarray] = {}
    for start in range(0, len(wanted), 512):
        batch = wanted[start : start + 512]
        vectors.update(zip(batch, embed(batch), strict=True))
        progress(f"  embedded {min(start + 512, len(wanted))}/{len(wanted)} sentences")
    return vectors


def fit(examples: list[Example], indices, vectors, c: float = PROBE_C) -> tuple[np.ndarray, float]:
    """A logistic-regression probe on the sentences of the examples at `indices`: (weights, bias)."""
    from sklearn.linear_model import LogisticRegression

    rows, labels, weights = [], [], []
    totals = {1: 0.0, 0: 0.0}
    for i in indices:
        example = examples[i]
        # A payload weighs 1 over its sentences; a contract sentence 1, a written one more.
        if example.label:
            share = 1 / len(example.sentences)
        else:
            share = WRITTEN_NEGATIVE_WEIGHT if example.group == "ordinary" else 1.0
        for sentence in example.sentences:
            rows.append(vectors[sentence])
            labels.append(example.label)
            weights.append(share)
            totals[example.label] += share
    y = np.array(labels)
    w = np.array(weights) * np.where(y == 1, totals[0] / max(totals[1], 1e-9), 1.0)
    probe = LogisticRegression(C=c, max_iter=5000).fit(np.stack(rows), y, sample_weight=w * len(y) / w.sum())
    return probe.coef_[0].astype(np.float32), float(probe.intercept_[0])


def sentence_score(examples: list[Example], i: int, vectors, probe) -> list[float]:
    weights, bias = probe
    return [float(vectors[s] @ weights + bias) for s in examples[i].sentences]


def _folds(indices: list[int], examples: list[Example], k: int, seed: int) -> dict[int, int]:
    """A fold number per contract index (the sentences of one contract together)."""
    rng = random.Random(seed)  # noqa: S311  (a seeded split, not a secret)
    shuffled = list(indices)
    rng.shuffle(shuffled)
    return {i: n % k for n, i in enumerate(shuffled)}


def threshold_for(examples: list[Example], indices: list[int], vectors, c: float = PROBE_C) -> float:
    """The score that at most `FALSE_ALARM_RATE` of the contract sentences among `indices` reach
    when each is scored by a probe trained without its contract (5 folds by contract)."""
    contracts = [i for i in indices if examples[i].label == 0]
    fold = _folds(contracts, examples, 5, SEED + 1)
    held_scores: list[float] = []
    for k in range(5):
        held = {i for i in contracts if fold[i] == k}
        probe = fit(examples, [i for i in indices if i not in held], vectors, c)
        for i in held:
            held_scores += sentence_score(examples, i, vectors, probe)
    ranked = sorted(held_scores, reverse=True)
    allowed = int(FALSE_ALARM_RATE * len(ranked))
    return ranked[min(allowed, len(ranked) - 1)]


def splits(examples: list[Example]) -> dict[str, list[tuple[str, list[int]]]]:
    """Cross-validation schemes: name -> [(fold name, held-out indices)]."""
    everything = range(len(examples))
    contracts = [i for i in everything if examples[i].label == 0]
    dev = [i for i in everything if examples[i].label == 1 and examples[i].group != HAND_WRITTEN]
    hand = [i for i in everything if examples[i].group == HAND_WRITTEN]
    categories = sorted({examples[i].group for i in dev})
    category_fold = {category: n % 6 for n, category in enumerate(categories)}
    contract_fold = _folds(contracts, examples, 6, SEED)
    payload_fold = _folds(dev + hand, examples, 6, SEED + 2)
    return {
        "payloads held out (random 6-fold)": [
            (
                f"fold {k}",
                [i for i in dev + hand if payload_fold[i] == k]
                + [i for i in contracts if contract_fold[i] == k],
            )
            for k in range(6)
        ],
        "BIPIA categories held out": [
            (
                f"fold {k}",
                [i for i in dev if category_fold[examples[i].group] == k]
                + [i for i in contracts if contract_fold[i] == k],
            )
            for k in range(6)
        ],
        "hand-written held out (trained on the dev split)": [
            ("hand-written", hand + [i for i in contracts if contract_fold[i] == 0]),
        ],
    }


def cross_validate(examples: list[Example], vectors, c: float = PROBE_C, progress=print) -> dict:
    """For each scheme and fold: train on the rest, pick the threshold on the training part, and
    count on the held-out examples: payloads flagged by the rules, the model and either, and
    contract sentences the model flags."""
    result: dict = {}
    for scheme, folds in splits(examples).items():
        rows = []
        for name, held_out in folds:
            held = set(held_out)
            train = [i for i in range(len(examples)) if i not in held]
            if scheme.startswith("hand-written"):
                train = [i for i in train if examples[i].group != HAND_WRITTEN]
            probe = fit(examples, train, vectors, c)
            threshold = threshold_for(examples, train, vectors, c)
            rows.append(
                {"fold": name, "threshold": threshold, **count(examples, held_out, vectors, probe, threshold)}
            )
            progress(f"  {scheme} / {name}: threshold {threshold:.2f}")
        result[scheme] = rows
    return result


def count(examples: list[Example], indices, vectors, probe, threshold: float) -> dict:
    """Held-out counts: payloads flagged by the rules (on the payload as planted), the model, and
    either; contract sentences the model flags; the payloads each detector missed."""
    tally = {"payloads": 0, "rules": 0, "model": 0, "both": 0, "sentences": 0, "false_alarms": 0}
    missed: list[str] = []
    for i in indices:
        example = examples[i]
        by_model = max(sentence_score(examples, i, vectors, probe)) >= threshold
        if example.label:
            by_rules = bool(planted_findings(example.text))
            tally["payloads"] += 1
            tally["rules"] += by_rules
            tally["model"] += by_model
            tally["both"] += by_rules or by_model
            if not by_model:
                missed.append(example.sentences[0][:80])
        else:
            scored = sentence_score(examples, i, vectors, probe)
            tally["sentences"] += len(scored)
            tally["false_alarms"] += sum(score >= threshold for score in scored)
    return {**tally, "model_missed": missed}


def train_final(
    examples: list[Example], vectors, *, embedding_model: str, c: float = PROBE_C
) -> InjectionModel:
    """The packaged model: trained on every example, its threshold set by `threshold_for`."""
    everything = list(range(len(examples)))
    weights, bias = fit(examples, everything, vectors, c)
    payloads = sum(example.label for example in examples)
    sentences = sum(len(example.sentences) for example in examples if not example.label)
    return InjectionModel(
        weights=weights,
        bias=bias,
        threshold=threshold_for(examples, everything, vectors, c),
        embedding_model=embedding_model,
        trained_on=(
            f"{payloads} planted instructions (hostile dev split, indirect; planted_shapes.json) against "
            f"{sentences} candidate sentences of CUAD contracts"
        ),
    )


def render(result: dict) -> str:
    """A Markdown table per scheme, held-out counts summed over its folds."""
    lines = []
    for scheme, rows in result.items():
        total = {key: sum(row[key] for row in rows) for key in ("payloads", "rules", "model", "both")}
        sentences = sum(row["sentences"] for row in rows)
        alarms = sum(row["false_alarms"] for row in rows)
        lines += [
            f"\n### {scheme} (thresholds " + ", ".join(f"{row['threshold']:.2f}" for row in rows) + ")\n",
            "| payloads | rules (in-sample) | model alone | rules OR model | contract sentences flagged |",
            "|---:|---:|---:|---:|---:|",
            f"| {total['payloads']} | {total['rules']} | {total['model']} | {total['both']} "
            f"| {alarms} / {sentences} ({100 * alarms / max(sentences, 1):.2f} %) |",
        ]
        missed = [text for row in rows for text in row["model_missed"]]
        if missed:
            lines.append("\nMissed by the model: " + "; ".join(f"`{text}`" for text in missed))
    return "\n".join(lines)
