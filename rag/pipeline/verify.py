"""Hallucination checks of a processed answer against the sources its prompt listed.

Three checks, each measurable on its own (`bench/hallucination.py` will report them):
1. **Citations exist**: every citation token names a source of the prompt (`invalid_citations`,
   found by the post-processor).
2. **Quotes are real**: every snippet a citation carries, and every "quoted passage" in the answer
   followed by a citation marker, occurs in the cited source's text (compared with whitespace,
   case and quote marks normalized).
3. **Cited sentences are supported**: for each answer sentence that cites sources, the share of
   its content words (stemmed, stopwords left out) found in the cited passages must reach
   SUPPORT_THRESHOLD. Paraphrase keeps most content words of its source; a claim the source does
   not make brings words of its own.

`hallucination_detected` is true when any check fails; `needs_verification` also when a substantive
answer cites nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.llm import Source
from rag.retrieval import snippets

from .postprocess import MARKER, ProcessedAnswer, marker_tokens, resolve

SUPPORT_THRESHOLD = 0.5
MIN_CONTENT_WORDS = 3  # shorter sentences ("See [1].") are not judged
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d]{12,})[\"\u201d]\s*((?:\[[^\[\]\n]{1,200}\]\s*)+)")
_QUOTE_CHARS = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


@dataclass
class Verification:
    """What the checks found."""

    invalid_citations: list[str] = field(default_factory=list)
    misquoted: list[str] = field(default_factory=list)  # citation tokens whose quote is not in the source
    unsupported: list[str] = field(default_factory=list)  # answer sentences their sources do not support
    uncited_answer: bool = False

    @property
    def hallucination_detected(self) -> bool:
        return bool(self.invalid_citations or self.misquoted or self.unsupported)

    @property
    def needs_verification(self) -> bool:
        return self.hallucination_detected or self.uncited_answer


def verify(answer: ProcessedAnswer, sources: Sequence[Source]) -> Verification:
    """Run the three checks on `answer` (see the module docstring)."""
    result = Verification(invalid_citations=list(answer.invalid_citations))
    if answer.answer is None:
        return result
    for citation in answer.citations:
        if citation.snippet and not _occurs(citation.snippet, citation.source.text):
            result.misquoted.append(citation.token)
    for quote, markers in _QUOTED.findall(answer.answer):
        for token in marker_tokens(markers):
            source = resolve(token, sources)
            if source is not None and not _occurs(quote, source.text) and token not in result.misquoted:
                result.misquoted.append(token)
    for sentence, tokens in cited_sentences(answer.answer):
        cited = [source for source in (resolve(token, sources) for token in tokens) if source is not None]
        if cited and support(sentence, [source.text for source in cited]) < SUPPORT_THRESHOLD:
            result.unsupported.append(sentence)
    result.uncited_answer = not answer.citations and len(content_words(answer.answer)) >= MIN_CONTENT_WORDS
    return result


def support(sentence: str, passages: Sequence[str]) -> float:
    """Share (0..1) of `sentence`'s content words found in `passages` (1.0 when it has fewer than
    MIN_CONTENT_WORDS: nothing to judge)."""
    words = content_words(MARKER.sub(" ", sentence))
    if len(words) < MIN_CONTENT_WORDS:
        return 1.0
    available = set().union(*(content_words(passage) for passage in passages))
    return sum(1 for word in words if word in available) / len(words)


def content_words(text: str) -> set[str]:
    """The stems of `text`'s words that carry meaning (stopwords left out)."""
    return {snippets.stem(word) for word in snippets.words(text) if word not in snippets.STOPWORDS}


def _occurs(quote: str, text: str) -> bool:
    return _normalized(quote) in _normalized(text)


def _normalized(text: str) -> str:
    text = text.translate(_QUOTE_CHARS).lower()
    return " ".join(text.replace("…", " ").split()).strip(" .\"'")


_LEADING_MARKERS = re.compile(r"^[\s\W]*?((?:\[[^\[\]\n]{1,200}\]\s*)+)")


def cited_sentences(answer: str) -> list[tuple[str, list[str]]]:
    """The answer's sentences with the citation tokens each carries. Markers right after a
    sentence end ('… monthly." [1] Next …') belong to the sentence before them."""
    result: list[tuple[str, list[str]]] = []
    for start, end in snippets.sentence_spans(answer):
        sentence = answer[start:end]
        leading = _LEADING_MARKERS.match(sentence)
        if leading and result:
            result[-1][1].extend(marker_tokens(leading.group(1)))
            sentence = sentence[leading.end() :]
        if content_words(MARKER.sub(" ", sentence)):
            result.append((sentence.strip(), marker_tokens(sentence)))
        elif result:
            result[-1][1].extend(marker_tokens(sentence))
    return result
