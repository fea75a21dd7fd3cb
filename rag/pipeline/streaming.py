"""Streamed answers (`ctx.stream`): the events the executor yields while the generation stage runs,
and how a model's reply, while it is still being written, becomes answer text a reader can see.

Models are asked for JSON (`{"answer": "…", "citations": […], …}`), so the raw reply is not what
a reader should see: until it ends, its "answer" string is decoded as far as it goes (an escape cut
in half waits for its other half). A reply in prose is its own answer text. What is streamed is
the model's draft, unverified: the `result` that follows is the answer to trust (rag.api.streaming).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass

from .numbering import StreamedNumbers
from .postprocess import ANSWER_FIELD, json_string_prefix


@dataclass(frozen=True)
class Accepted:
    """The question passed its checks (options, scope, sanitising): what can still fail is the
    search or the model, so the stream may begin (its `meta` event) before either runs."""


@dataclass(frozen=True)
class GenerationStarted:
    """The model is about to write: the context's sources are final (the stream's `sources` event)."""


@dataclass(frozen=True)
class AnswerDelta:
    """Answer text to append to what was streamed before."""

    text: str


class AnswerText:
    """The answer text of a reply that grows chunk by chunk; `feed` returns what to append."""

    def __init__(self) -> None:
        self.raw = ""
        self.shown = ""

    def feed(self, chunk: str) -> str:
        """Add `chunk` of the raw reply; returns the answer text it adds ("" when none yet)."""
        self.raw += chunk
        visible = self._visible()
        if not visible.startswith(self.shown):  # cannot happen with decoded prefixes; never retract
            return ""
        delta, self.shown = visible[len(self.shown) :], visible
        return delta

    def _visible(self) -> str:
        start = self.raw.lstrip()[:1]
        if not start:
            return ""
        if start in "{`":  # JSON, perhaps in a ```json fence: only the answer string is text
            field = ANSWER_FIELD.search(self.raw)
            return json_string_prefix(self.raw, field.end())[0] if field else ""
        return self.raw


def answer_deltas(
    chunks: Iterator[str], numbers: StreamedNumbers | None = None
) -> Generator[AnswerDelta, None, object]:
    """`chunks` of a model's raw reply as `AnswerDelta`s of its answer text; returns what `chunks`
    returns (the provider's `Generation`). `numbers`: the citation markers renumbered as the
    result's will be (rag.pipeline.numbering). Closing this generator closes `chunks`, so a client
    that goes away stops the provider's stream: no further tokens are pulled."""
    text = AnswerText()
    try:
        while True:
            try:
                chunk = next(chunks)
            except StopIteration as finished:
                rest = numbers.flush() if numbers is not None else ""
                if rest:
                    yield AnswerDelta(rest)
                return finished.value
            delta = text.feed(chunk)
            if delta and numbers is not None:
                delta = numbers.feed(delta)
            if delta:
                yield AnswerDelta(delta)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
