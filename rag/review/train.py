"""Training the clause model (rag.review.model) on lawyers' labels, with figures held out by matter.

Input: a cuad-review question file (../shared/eval/cuad-review/dev.json): its matters, the
documents the lawyers marked for each clause type (list questions: every document of a matter is
labelled for every type) and their clause spans. Each document is cut into the paragraphs the
product reads (`rag.review.signals.paragraphs`).

- Features: TF-IDF of words and word pairs (rag.review.lexicon), the vocabulary and its inverse
  document frequencies fitted on the training paragraphs (the MAX_FEATURES most frequent terms).
- Probes: per clause type, a logistic regression over those features; a paragraph is positive
  when it overlaps a span the lawyers marked for that type.
- Calibration: a document's score is its best evidence paragraph's (rag.review.signals, the code
  the product runs); the probability and the decision threshold are fitted on held-out
  predictions (each matter scored by a model trained on the other matters), so they are those of
  probes meeting new contracts.
- Figures: the same held-out predictions, per clause type and overall (precision and recall of
  the documents a list would name), and their ROC AUC.

Needs scikit-learn (installed with sentence-transformers); the product itself only reads the
JSON it writes.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import signals
from .columns import BY_KEY, COLUMNS
from .lexicon import NGRAMS, TOKEN, Lexicon
from .model import ClauseModel, Probe

# CUAD's category names (master_clauses.csv, as the question files carry them) → column keys.
CUAD_CATEGORIES = {column.label: column.key for column in COLUMNS} | {
    "Rofr/Rofo/Rofn": "rofr_rofo_rofn",
    "Affiliate IP License-Licensor": "affiliate_license_licensor",
    "Affiliate IP License-Licensee": "affiliate_license_licensee",
    "Notice Period to Terminate Renewal": "notice_to_terminate_renewal",
}
# Held out by matter (bench/README.md): F1 flat from C = 4 to 16 and from 20k to 50k terms; 10k
# terms lose two points.
PROBE_C = 4.0  # inverse regularisation of each probe
MAX_FEATURES = 20_000
MIN_DF = 2  # a term in one training paragraph only is noise
PRUNE = 0.1  # smaller weights are dropped: a sixth of the file, held-out figures unchanged
THRESHOLDS = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5)  # the decision threshold is chosen among these


@dataclass
class Corpus:
    matters: dict[str, list[str]]  # matter → document files
    texts: dict[str, str] = field(default_factory=dict)
    paragraphs: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    labels: dict[tuple[str, str], bool] = field(default_factory=dict)  # (file, column) → has it
    spans: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))

    def files(self, *, without: str | None = None) -> list[str]:
        return [file for matter, files in self.matters.items() if matter != without for file in files]


def load(questions_file: Path, corpus_root: Path) -> Corpus:
    """The matters, texts, paragraphs and labels of a cuad-review question file."""
    data = json.loads(questions_file.read_text())
    corpus = Corpus({case["name"]: [d["file"] for d in case["documents"]] for case in data["cases"]})
    for question in data["questions"]:
        key = CUAD_CATEGORIES.get(question["category"])
        if key is None or BY_KEY[key].kind != "presence":
            continue
        if question["kind"] == "list":
            for file in corpus.matters[question["scope"]["case"]]:
                corpus.labels[(file, key)] = file in question["gold_documents"]
        for gold in question.get("gold") or []:
            corpus.spans[(gold["file"], key)].append(tuple(gold["span"]))
    corpus.spans = dict(corpus.spans)
    for file in corpus.files():
        path = corpus_root / file.replace("cuad-full/", "cuad-full-corpus/cuad/")
        corpus.texts[file] = path.read_text(encoding="utf-8", errors="replace")
        corpus.paragraphs[file] = signals.paragraphs(corpus.texts[file])
    return corpus


def _paragraph_texts(corpus: Corpus, file: str) -> list[str]:
    return signals.reading_texts(corpus.texts[file], corpus.paragraphs[file])


def overlap_labels(corpus: Corpus, file: str, key: str, spans) -> np.ndarray:
    """For each of `spans` of `file`, whether it overlaps a span the lawyers marked for `key`."""
    gold = corpus.spans.get((file, key), [])
    return np.array([any(s < ge and gs < e for gs, ge in gold) for s, e in spans])


def paragraph_labels(corpus: Corpus, file: str, key: str) -> np.ndarray:
    return overlap_labels(corpus, file, key, corpus.paragraphs[file])


def fit(corpus: Corpus, files: list[str], keys: list[str]) -> tuple[Lexicon, dict[str, Probe]]:
    """The vocabulary of `files`' paragraphs and a probe for each of `keys` with a positive
    paragraph among them."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(
        token_pattern=TOKEN, ngram_range=NGRAMS, min_df=MIN_DF, sublinear_tf=True, max_features=MAX_FEATURES
    )
    x = vectorizer.fit_transform([text for file in files for text in _paragraph_texts(corpus, file)])
    lexicon = Lexicon(tuple(vectorizer.get_feature_names_out()), vectorizer.idf_)
    probes = {}
    for key in keys:
        y = np.concatenate([paragraph_labels(corpus, file, key) for file in files])
        if not y.any():
            continue
        fitted = LogisticRegression(C=PROBE_C, class_weight="balanced", max_iter=3000).fit(x, y)
        weights = fitted.coef_[0].astype(np.float32)
        weights[np.abs(weights) < PRUNE] = 0.0
        probes[key] = Probe(weights, float(fitted.intercept_[0]))
    return lexicon, probes


def _document_scores(model: ClauseModel, corpus: Corpus, file: str) -> dict[str, float]:
    """Each probe's document score for `file`, as rag.review.signals computes it."""
    keys = sorted(model.probes)
    texts, spans = _paragraph_texts(corpus, file), corpus.paragraphs[file]
    scores = model.paragraph_scores(keys, texts)
    return {
        key: signals.best_paragraph(BY_KEY[key], scores[:, column], texts, spans)[0]
        for column, key in enumerate(keys)
    }


def held_out_scores(corpus: Corpus, document_scores, progress=print) -> dict[tuple[str, str], float]:
    """{(file, clause type): score} of every labelled pair, each matter's documents scored by
    `document_scores(training files, test files, clause types)` fitted on the other matters."""
    keys = sorted({key for _, key in corpus.labels})
    held_out: dict[tuple[str, str], float] = {}
    for matter, files in corpus.matters.items():
        for (file, key), score in document_scores(corpus.files(without=matter), files, keys).items():
            if (file, key) in corpus.labels:
                held_out[(file, key)] = score
        progress(f"held out {matter}")
    return held_out


def calibrated(corpus: Corpus, held_out: dict) -> tuple[tuple[float, float], float, dict]:
    """The combiner and decision threshold fitted on held-out scores, and the figures they give
    (list precision/recall/F1 as cuad-review scores them, pooled, per clause type, ROC AUC)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    items = sorted(held_out)
    x = np.array([[max(held_out[item], -20.0)] for item in items])
    y = np.array([corpus.labels[item] for item in items])
    calibration = LogisticRegression(max_iter=1000).fit(x, y)
    combiner = (float(calibration.coef_[0][0]), float(calibration.intercept_[0]))
    scorer = ClauseModel(Lexicon((), np.zeros(0)), {}, combiner, 0.5, "")
    threshold = max(THRESHOLDS, key=lambda t: _mean_f1(figures(_with(scorer, t), corpus, held_out)))
    found = figures(_with(scorer, threshold), corpus, held_out)
    return combiner, threshold, found | {"list_f1": _mean_f1(found), "auc": float(roc_auc_score(y, x[:, 0]))}


def lexical_scores(corpus: Corpus, training: list[str], files: list[str], keys: list[str]) -> dict:
    """Document scores of `files` by the product's probes (`fit`) trained on `training`."""
    lexicon, probes = fit(corpus, training, keys)
    model = ClauseModel(lexicon, probes, (1.0, 0.0), 0.5, "")
    return {
        (file, key): score for file in files for key, score in _document_scores(model, corpus, file).items()
    }


def train(corpus: Corpus, *, trained_on: str, progress=print) -> tuple[ClauseModel, dict]:
    """The clause model for the labelled columns, and its held-out figures."""
    held_out = held_out_scores(corpus, functools.partial(lexical_scores, corpus), progress)
    combiner, threshold, found = calibrated(corpus, held_out)
    lexicon, probes = fit(corpus, corpus.files(), sorted({key for _, key in corpus.labels}))
    return ClauseModel(lexicon, probes, combiner, threshold, trained_on), found


def _with(model: ClauseModel, threshold: float) -> ClauseModel:
    return dataclasses.replace(model, threshold=threshold)


def _mean_f1(found: dict) -> float:
    p, r = found["list_precision"], found["list_recall"]
    return 2 * p * r / (p + r) if p + r else 0.0


def figures(model: ClauseModel, corpus: Corpus, held_out: dict) -> dict:
    """Held-out precision/recall of the documents named per (matter, clause type), averaged like
    cuad-review's list score, and pooled; per clause type too."""
    by_list: dict[tuple[str, str], tuple[set, set]] = {}
    for matter, files in corpus.matters.items():
        for (file, key), score in held_out.items():
            if file not in files:
                continue
            named, wanted = by_list.setdefault((matter, key), (set(), set()))
            if model.probability(score) >= model.threshold:
                named.add(file)
            if corpus.labels[(file, key)]:
                wanted.add(file)
    precisions, recalls, empty_ok = [], [], []
    per_key: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for (_, key), (named, wanted) in by_list.items():
        tp = len(named & wanted)
        per_key[key][0] += tp
        per_key[key][1] += len(named - wanted)
        per_key[key][2] += len(wanted - named)
        if wanted:
            precisions.append(tp / len(named) if named else 0.0)
            recalls.append(tp / len(wanted))
        else:
            empty_ok.append(not named)
    tp, fp, fn = (sum(v[i] for v in per_key.values()) for i in range(3))
    return {
        "list_precision": float(np.mean(precisions)),
        "list_recall": float(np.mean(recalls)),
        "list_empty_ok": float(np.mean(empty_ok)) if empty_ok else None,
        "threshold": model.threshold,
        "pooled_precision": tp / max(tp + fp, 1),
        "pooled_recall": tp / max(tp + fn, 1),
        "per_column": {key: {"tp": v[0], "fp": v[1], "fn": v[2]} for key, v in sorted(per_key.items())},
    }
