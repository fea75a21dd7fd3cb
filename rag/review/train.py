"""Training the clause model (rag.review.model) on lawyers' labels, with figures held out by matter.

Input: a cuad-review question file (../shared/eval/cuad-review/dev.json): its matters, the
documents the lawyers marked for each clause type (list questions: every document of a matter is
labelled for every type) and their clause spans. The documents are chunked and embedded as
ingestion does (`rag.ingest.chunking`, `rag.ingest.embedding`), so a probe reads what it will
read in the index.

- Probes: per clause type, a logistic regression over passage embeddings; a passage is positive
  when it overlaps a span the lawyers marked for that type.
- Calibration: a document's score is its best evidence paragraph's (rag.review.signals, the code
  the product runs); the probability and the decision threshold are fitted on held-out
  predictions (each matter scored by probes trained on the other matters), so they are those of
  probes meeting new contracts.
- Figures: the same held-out predictions, per clause type and overall (precision and recall of
  the documents a list would name).

Needs scikit-learn (installed with sentence-transformers); the product itself only reads the
JSON it writes.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rag.ingest import embedding
from rag.ingest.chunking import chunk_text

from . import signals
from .columns import BY_KEY, COLUMNS, Column
from .model import ClauseModel, Probe

# CUAD's category names (master_clauses.csv, as the question files carry them) → column keys.
CUAD_CATEGORIES = {column.label: column.key for column in COLUMNS} | {
    "Rofr/Rofo/Rofn": "rofr_rofo_rofn",
    "Affiliate IP License-Licensor": "affiliate_license_licensor",
    "Affiliate IP License-Licensee": "affiliate_license_licensee",
    "Notice Period to Terminate Renewal": "notice_to_terminate_renewal",
}
PROBE_C = 1.0  # inverse regularisation of each probe (held-out AUC flat from 0.3 to 3)
THRESHOLDS = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5)  # the decision threshold is chosen among these


@dataclass
class Corpus:
    matters: dict[str, list[str]]  # matter → document files
    chunks: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)  # file → spans, text
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    paragraphs: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    paragraph_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    labels: dict[tuple[str, str], bool] = field(default_factory=dict)  # (file, column) → has it
    spans: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))


def load(questions_file: Path, corpus_root: Path, *, progress=print, cache: Path | None = None) -> Corpus:
    """The matters, texts, chunks, embeddings and labels of a cuad-review question file (kept in
    `cache`, a pickle, and read from it when it exists: embedding 100 contracts takes minutes)."""
    if cache is not None and cache.is_file():
        corpus = pickle.loads(cache.read_bytes())  # noqa: S301 (the cache this function wrote)
        if getattr(corpus, "paragraph_vectors", None):
            return corpus
        return _with_paragraphs(corpus, corpus_root, progress, cache)
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
    files = [file for files in corpus.matters.values() for file in files]
    for number, file in enumerate(files, 1):
        path = corpus_root / file.replace("cuad-full/", "cuad-full-corpus/cuad/")
        text = path.read_text(encoding="utf-8", errors="replace")
        spans = chunk_text(text, readable=embedding.readable_length)
        corpus.chunks[file] = [(span.start, span.end, span.text) for span in spans]
        corpus.vectors[file] = embedding.embed([span.text for span in spans])
        progress(f"embedded {number}/{len(files)} documents")
    corpus.spans = dict(corpus.spans)
    return _with_paragraphs(corpus, corpus_root, progress, cache)


def _with_paragraphs(corpus: Corpus, corpus_root: Path, progress, cache: Path | None) -> Corpus:
    """`corpus` with each document's paragraphs embedded (what signals score)."""
    files = [file for files in corpus.matters.values() for file in files]
    corpus.texts = getattr(corpus, "texts", None) or {}
    corpus.paragraphs, corpus.paragraph_vectors = {}, {}
    for number, file in enumerate(files, 1):
        path = corpus_root / file.replace("cuad-full/", "cuad-full-corpus/cuad/")
        text = corpus.texts.get(file) or path.read_text(encoding="utf-8", errors="replace")
        corpus.texts[file] = text
        spans = signals.paragraphs(text)
        corpus.paragraphs[file] = spans
        corpus.paragraph_vectors[file] = embedding.embed([text[s:e] for s, e in spans])
        progress(f"embedded the paragraphs of {number}/{len(files)} documents")
    if cache is not None:
        cache.write_bytes(pickle.dumps(corpus))
    return corpus


def _chunk_labels(corpus: Corpus, file: str, key: str) -> np.ndarray:
    gold = corpus.spans.get((file, key), [])
    return np.array([any(s < ge and gs < e for gs, ge in gold) for s, e, _ in corpus.chunks[file]])


def fit_probe(corpus: Corpus, files: list[str], key: str) -> Probe | None:
    from sklearn.linear_model import LogisticRegression

    y = np.concatenate([_chunk_labels(corpus, f, key) for f in files])
    if y.sum() < 2:
        return None
    x = np.vstack([corpus.vectors[f] for f in files])
    fitted = LogisticRegression(C=PROBE_C, class_weight="balanced", max_iter=3000).fit(x, y)
    return Probe(fitted.coef_[0].astype(np.float32), float(fitted.intercept_[0]))


def _document_score(corpus: Corpus, file: str, column: Column, probe: Probe) -> float:
    text = corpus.texts[file]
    return signals.best_paragraph(
        column, probe, text, corpus.paragraphs[file], corpus.paragraph_vectors[file]
    )[0]


def train(
    corpus: Corpus, *, embedding_model: str, trained_on: str, progress=print
) -> tuple[ClauseModel, dict]:
    """The clause model for the labelled columns, and its held-out figures."""
    from sklearn.linear_model import LogisticRegression

    keys = sorted({key for _, key in corpus.labels})
    held_out: dict[tuple[str, str], float] = {}
    for matter, files in corpus.matters.items():
        others = [f for m, fs in corpus.matters.items() if m != matter for f in fs]
        for key in keys:
            probe = fit_probe(corpus, others, key)
            for file in files:
                if probe is not None and (file, key) in corpus.labels:
                    held_out[(file, key)] = _document_score(corpus, file, BY_KEY[key], probe)
        progress(f"held out {matter}")
    items = sorted(held_out)
    x = np.array([[max(held_out[item], -20.0)] for item in items])
    y = np.array([corpus.labels[item] for item in items])
    calibration = LogisticRegression(max_iter=1000).fit(x, y)
    combiner = (float(calibration.coef_[0][0]), float(calibration.intercept_[0]))
    all_files = [f for fs in corpus.matters.values() for f in fs]
    probes = {key: probe for key in keys if (probe := fit_probe(corpus, all_files, key)) is not None}
    model = ClauseModel(embedding_model, probes, combiner, 0.5, trained_on)
    threshold = max(THRESHOLDS, key=lambda t: _mean_f1(figures(_with(model, t), corpus, held_out)))
    model = _with(model, threshold)
    return model, figures(model, corpus, held_out)


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
