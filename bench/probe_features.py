"""bench/probe_features.py: what should the clause model's probes read, embeddings or words?

    .venv/bin/python bench/probe_features.py --questions ../shared/eval/cuad-review/dev.json \
        --corpus-root ../shared/eval --cache-dir /work/bench-out [--results bench/results-probe-features.txt]

The clause model (rag.review.model) has one logistic-regression probe per CUAD clause type, and a
document's score is its best evidence paragraph's (rag.review.signals). This script scores four
designs held out by matter exactly as `manage.py review_train` does (each matter's documents
scored by probes trained on the other three; calibration and the decision threshold fitted on
those held-out scores; `rag.review.train.calibrated`):

- `minilm-passages`: probes over the search's MiniLM embeddings of 1,000-character passages,
  applied to paragraph embeddings (the model shipped until 2026-11-27);
- `minilm-paragraphs`: the same probes trained on paragraph embeddings;
- `words`: TF-IDF of words and word pairs (rag.review.lexicon, `train.lexical_scores`: shipped);
- `both`: the paragraph embedding probe's score plus WORDS_WEIGHT times the words probe's.

It prints list precision/recall/F1 as cuad-review scores them, empty lists right, pooled
precision/recall, the chosen threshold and the ROC AUC over every labelled (document, clause type)
pair. Embeddings are kept in --cache-dir (embedding the 100 contracts twice takes ~15 minutes on
this machine).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import setup_django

WORDS_WEIGHT = 1.5  # the best of 1, 1.5, 2, 3 and 5 when this was measured


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--corpus-root", required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--results", help="also write the table here")
    args = parser.parse_args()
    setup_django()
    from rag.review import train

    corpus = train.load(Path(args.questions), Path(args.corpus_root))
    vectors = Embedded(corpus, Path(args.cache_dir))
    designs = {
        "minilm-passages": vectors.passage_probe_scores,
        "minilm-paragraphs": vectors.paragraph_probe_scores,
        "words": lambda training, files, keys: train.lexical_scores(corpus, training, files, keys),
        "both": lambda training, files, keys: _sum(
            vectors.paragraph_probe_scores(training, files, keys),
            train.lexical_scores(corpus, training, files, keys),
        ),
    }
    header = (
        f"{'held out by matter':22} {'P':>6} {'R':>6} {'F1':>6} {'empty':>6} {'pooled P':>9} "
        f"{'pooled R':>9} {'t':>5} {'AUC':>6}"
    )
    lines = [header]
    print(header, flush=True)
    for name, scorer in designs.items():
        _, threshold, found = train.calibrated(corpus, train.held_out_scores(corpus, scorer, progress=_quiet))
        line = (
            f"{name:22} {100 * found['list_precision']:6.1f} {100 * found['list_recall']:6.1f} "
            f"{100 * found['list_f1']:6.1f} {100 * (found['list_empty_ok'] or 0):6.1f} "
            f"{100 * found['pooled_precision']:9.1f} {100 * found['pooled_recall']:9.1f} {threshold:5.2f} "
            f"{found['auc']:6.3f}"
        )
        lines.append(line)
        print(line, flush=True)
    if args.results:
        Path(args.results).write_text("\n".join(lines) + "\n")


def _quiet(message: str) -> None:
    pass


def _sum(embedded: dict, words: dict) -> dict:
    return {item: embedded[item] + WORDS_WEIGHT * words[item] for item in embedded}


class Embedded:
    """The corpus's passages and paragraphs embedded with the search's model (cached), and the
    embedding probes' held-out document scores."""

    def __init__(self, corpus, cache_dir: Path):
        from rag.ingest import embedding
        from rag.ingest.chunking import chunk_text

        self.corpus = corpus
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.passages, self.passage_vectors, self.paragraph_vectors = {}, {}, {}
        for number, file in enumerate(corpus.files(), 1):
            text = corpus.texts[file]
            spans = chunk_text(text, readable=embedding.readable_length)
            self.passages[file] = [(span.start, span.end) for span in spans]
            cached = cache_dir / f"{Path(file).stem[:80]}-{number}.npz"
            if cached.is_file():
                stored = np.load(cached)
                self.passage_vectors[file] = stored["passages"]
                self.paragraph_vectors[file] = stored["paragraphs"]
                continue
            self.passage_vectors[file] = embedding.embed([span.text for span in spans])
            self.paragraph_vectors[file] = embedding.embed([text[s:e] for s, e in corpus.paragraphs[file]])
            np.savez(cached, passages=self.passage_vectors[file], paragraphs=self.paragraph_vectors[file])
            if number % 10 == 0:
                print(f"embedded {number}/{len(corpus.files())} documents", file=sys.stderr, flush=True)

    def passage_probe_scores(self, training, files, keys) -> dict:
        return self._scores(training, files, keys, self.passage_vectors, self._passage_labels)

    def paragraph_probe_scores(self, training, files, keys) -> dict:
        return self._scores(training, files, keys, self.paragraph_vectors, self._paragraph_labels)

    def _scores(self, training, files, keys, vectors, labels) -> dict:
        from sklearn.linear_model import LogisticRegression

        from rag.review import signals
        from rag.review.columns import BY_KEY

        x = np.vstack([vectors[file] for file in training])
        found = {}
        for key in keys:
            y = np.concatenate([labels(file, key) for file in training])
            if not y.any():
                continue
            probe = LogisticRegression(class_weight="balanced", max_iter=3000).fit(x, y)
            for file in files:
                scores = probe.decision_function(self.paragraph_vectors[file])
                spans = self.corpus.paragraphs[file]
                texts = [self.corpus.texts[file][s:e] for s, e in spans]
                found[(file, key)] = signals.best_paragraph(BY_KEY[key], scores, texts, spans)[0]
        return found

    def _passage_labels(self, file: str, key: str) -> np.ndarray:
        from rag.review import train

        return train.overlap_labels(self.corpus, file, key, self.passages[file])

    def _paragraph_labels(self, file: str, key: str) -> np.ndarray:
        from rag.review import train

        return train.paragraph_labels(self.corpus, file, key)


if __name__ == "__main__":
    main()
