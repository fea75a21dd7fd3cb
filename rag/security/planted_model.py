"""A learned detector for instructions planted in documents: a linear probe over sentence embeddings.

The planted-instruction rules (`rag.security.planted`) name shapes seen in attacks; written from
one sample, they caught half of a batch written later (issue #33). This probe reads what a
sentence is *about*: the MiniLM embedding the product already loads for search (`rag.ingest.
embedding`), scored `w · embedding + b`, trained on public planted instructions (the BIPIA samples
of the hostile dev split and the hand-written shapes of `tests/security/planted_shapes.json`)
against the sentences of 510 CUAD contracts (`rag.security.planted_train`, `manage.py
hostile_train --planted`).

A whole passage would drown a one-line instruction in contract text, so only its candidate
sentences are scored (`planted.instruction_candidates`: whole sentences that address a person or
hold no contract word, ~7 % of a contract's), each alone. A passage is flagged when one of them
reaches the stored threshold, which was set so that few contract sentences scored out of sample
reach it. Scores are remembered per sentence: the same passages come back query after query.

The model lives in `data/planted_model.json`; with another `EMBEDDING_MODEL`, or without the file,
nothing is flagged by it (the rules still run).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from rag.security.injection_model import InjectionModel, embedding_scores, packaged
from rag.security.planted import instruction_candidates

MODEL_FILE = Path(__file__).resolve().parent / "data" / "planted_model.json"
# Sentence scores remembered (a few hundred kilobytes).
_REMEMBERED = 8192

_lock = threading.Lock()
_scores: OrderedDict[str, float] = OrderedDict()
_scored_by: list[InjectionModel] = []  # the model `_scores` belong to


def planted_model() -> InjectionModel | None:
    """The packaged planted-instruction model (read once per process), or None when there is none."""
    return packaged(MODEL_FILE)


def sentence_scores(sentences: list[str], model: InjectionModel | None = None) -> list[float] | None:
    """The model's score (a logit) of each sentence, or None when no model applies."""
    from django.conf import settings

    model = model or planted_model()
    if model is None or model.embedding_model != settings.EMBEDDING_MODEL:
        return None
    with _lock:
        if not _scored_by or _scored_by[0] is not model:
            _scores.clear()
            _scored_by[:] = [model]
        known = {s: _scores[s] for s in sentences if s in _scores}
    missing = [s for s in dict.fromkeys(sentences) if s not in known]
    scored = embedding_scores(missing, model) if missing else []
    if scored is None:
        return None
    fresh = dict(zip(missing, map(float, scored), strict=True))
    with _lock:
        if _scored_by and _scored_by[0] is model:
            _scores.update(fresh)
            while len(_scores) > _REMEMBERED:
                _scores.popitem(last=False)
    return [known.get(s, fresh.get(s)) for s in sentences]


def planted_sentences(text: str) -> list[str]:
    """The sentences of `text` the model reads as instructions planted for an assistant."""
    model = planted_model()
    candidates = instruction_candidates(text)
    if model is None or not candidates:
        return []
    scores = sentence_scores(candidates, model)
    if scores is None:
        return []
    return [s for s, score in zip(candidates, scores, strict=True) if score >= model.threshold]


def looks_planted(text: str) -> bool:
    """Whether the learned detector finds an instruction planted in `text`."""
    return bool(planted_sentences(text))
