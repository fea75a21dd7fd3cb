"""Token counts with a real tokenizer: the embedding model's own (all-MiniLM-L6-v2's WordPiece,
packaged offline with the model, so nothing is downloaded).

Remote models tokenize differently, but on English legal text WordPiece counts come within a
few per cent of Claude's and Mistral's, which is what a context budget needs; the word-based
estimate (`rag.ingest.chunking.token_estimate`) is off by much more on citations, numbers and
defined terms. Special tokens ([CLS], [SEP]) are not counted.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tokenizers import Tokenizer

from rag.ingest.embedding import resolve_model_path

_tokenizer: Tokenizer | None = None
_lock = threading.Lock()


def _get() -> Tokenizer:
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                tokenizer = Tokenizer.from_file(str(Path(resolve_model_path()) / "tokenizer.json"))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                _tokenizer = tokenizer
    return _tokenizer


def count_tokens(text: str) -> int:
    """How many tokens `text` is."""
    if not text:
        return 0
    return len(_get().encode(text, add_special_tokens=False).ids)


def truncate(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` that is at most `max_tokens` tokens, cut where a token starts."""
    if max_tokens <= 0:
        return ""
    encoding = _get().encode(text, add_special_tokens=False)
    if len(encoding.ids) <= max_tokens:
        return text
    end = encoding.offsets[max_tokens][0]
    return text[:end].rstrip()
