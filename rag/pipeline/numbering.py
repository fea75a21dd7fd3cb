"""Citation numbers in the order a reader meets them: [1], [2], [3].

The context numbers its passages by rank, and an answer often cites a later one first ("10
February 2012 [6]. … [6]; and … [1]"); agentic mode's model cites `[doc_42]` ids, as the agentic
spec asks, which mean nothing to a lawyer. Before the result is shown, every citation the answer
makes is renumbered by its first appearance in the answer, the passages it cites without a marker
next, then the rest of the context (so a chain-of-thought step's sources keep a number of their
own); the markers in the answer and in each step's answer are rewritten to match, and the
citations are listed in that order.

A request (or a firm's template) that asks for the `bracketed_ids` style keeps its ids: an
integration reads them.
"""

from __future__ import annotations

from .postprocess import MARKER, marker_tokens


def numbered_for_reader(ctx) -> bool:
    """Whether `ctx`'s answer gets its citations renumbered: unless the request or the firm's
    template asked for document ids themselves."""
    return ctx.citation_style != "bracketed_ids" or ctx.ids_for_model_only


def numbers(answer: str, token_ids: dict[str, str], cited: list[str], context: list[str]) -> dict[str, str]:
    """{context citation id: its number as shown}: the ids `answer`'s markers name (through
    `token_ids`, each token as written → the id it resolved to) by first appearance, then the
    rest of `cited`, then the rest of `context`."""
    order = [token_ids[token] for token in marker_tokens(answer) if token in token_ids]
    ordered = list(dict.fromkeys([*order, *cited, *context]))
    return {citation_id: str(number) for number, citation_id in enumerate(ordered, start=1)}


def renumbered(text: str, token_ids: dict[str, str], shown: dict[str, str]) -> str:
    """`text` with each marker whose tokens all resolve written with their numbers ("[doc_42,
    doc_7]" → "[1][2]"); any other bracket ("[sic]", "[***]") is left as it is."""

    def numbered_id(token: str) -> str | None:
        citation_id = token_ids.get(token)
        return citation_id if citation_id in shown else None

    return MARKER.sub(lambda marker: _rewritten(marker, numbered_id, shown.__getitem__), text)


def _rewritten(marker, context_id, number) -> str:
    """A citation marker in numbers: `context_id` maps each token as written to the context id it
    names (None: the bracket is no citation of ours, left as it is), `number` an id to its number."""
    tokens = marker_tokens(marker.group(0))
    ids = [context_id(token) for token in tokens]
    if not tokens or None in ids:
        return marker.group(0)
    return "".join(f"[{number(citation_id)}]" for citation_id in dict.fromkeys(ids))


HELD_MARKER_CHARS = 200  # an open "[" is held back this long while a marker may still close


class StreamedNumbers:
    """The same numbering for an answer streamed as it is written: each marker is renumbered when
    it closes (the first met is [1]), text from an unclosed "[" is held back until it closes, so the
    streamed text ends equal to the result's. `resolve`: a token as written → the context id it
    names, or None."""

    def __init__(self, resolve) -> None:
        self.resolve = resolve
        self.shown: dict[str, str] = {}
        self.pending = ""

    def feed(self, text: str) -> str:
        """The text ready to show after `text` is appended (markers renumbered)."""
        self.pending += text
        cut = self.pending.rfind("[")
        held = cut >= 0 and "]" not in self.pending[cut:] and "\n" not in self.pending[cut:]
        if held and len(self.pending) - cut <= HELD_MARKER_CHARS:
            ready, self.pending = self.pending[:cut], self.pending[cut:]
        else:
            ready, self.pending = self.pending, ""
        return MARKER.sub(self._number, ready)

    def flush(self) -> str:
        """What is still held back, at the end of the stream."""
        rest, self.pending = self.pending, ""
        return MARKER.sub(self._number, rest)

    def _number(self, marker) -> str:
        return _rewritten(marker, self.resolve, self._next_number)

    def _next_number(self, citation_id: str) -> str:
        """The id's number: the one it got when first met, else the next."""
        return self.shown.setdefault(citation_id, str(len(self.shown) + 1))
