"""The extractive provider's answer to a comparison (rag.review.compare): a markdown table, one row
per document, each quoting only that document's sources.

    Termination rights in 2 documents, side by side:

    | Document | Termination rights |
    | --- | --- |
    | Alpha Distribution Agreement | "Either party may terminate this Agreement …" [1] |
    | Beta Supply Agreement | No termination provision found in Beta Supply Agreement. |

Each row quotes its document's best answer window as the extractive answer does (`quoted_clause`:
the operative sentence with the rest of its short clause and the list a lead-in announces, never a
cut-off fragment), then a second window of the same document when it scores nearly as well
(SECOND_QUOTE_SHARE of the first) and says something else. Where the topic asks for a value (the
governing law, a date, a period: rag.answers.direct), the row states it first, as the answer about
that document alone would ("| Alpha | The laws of New York govern [1]. "…" [1] |"), and a second
window that states no such value is left out as filler. Every quote carries its source's
citation marker, so verification checks it against that passage and the UI links it. A quote is
verbatim: where it would hold a "|" (which would end the table cell) it stops before it, marked
as cut. A document with no sources says what its row `missing` text says. The confidence is the
mean of the rows' window confidences (rows found only).
"""

from __future__ import annotations

from rag.answers import direct

from .base import Comparison, Source
from .extractive import (
    I_DONT_KNOW,
    first_sentence,
    quoted_clause,
    quoted_reply,
    window_confidence,
    without_planted,
)
from .lists import OMISSION

SECOND_QUOTE_SHARE = 0.8  # a second window of a row is quoted when it scores this share of the first


def comparison_reply(comparison: Comparison, sources, *, citation_style: str = "inline_numbers") -> dict:
    """The reply to a comparison (see the module docstring), in the model output format."""
    rows, cited, confidences = [], [], []
    for document in comparison.documents:
        own = [source for source in sources if source.document_id == document.document_id]
        value, quotes = _stated(comparison.question, _quotes(own), own)
        title = _cell(document.title or "The document")
        if not quotes:
            rows.append(f"| {title} | {_cell(document.missing or 'Nothing found in the sources.')} |")
            continue
        quoted = "; ".join(f'"{text}" [{s.citation_id}]' for s, text in quotes)
        rows.append(f"| {title} | {_cell(value) + ' ' if value else ''}{quoted} |")
        cited += quotes
        lead = quotes[0][0]
        if lead.answer_score is not None:
            confidences.append(window_confidence(lead, [s for s in own if s is not lead]))
        else:
            confidences.append(max(min(lead.similarity_score, 1.0), 0.0))
    if not cited:
        return {"answer": I_DONT_KNOW, "citations": [], "follow_ups": [], "confidence": 0.0, "disclaimer": ""}
    heading = _cell(comparison.topic or "What it says")
    count = len(comparison.documents)
    lines = [
        f"{heading} in {count} documents, side by side:",
        "",
        f"| Document | {heading} |",
        "| --- | --- |",
        *rows,
    ]
    return quoted_reply(lines, cited, sum(confidences) / len(confidences), sources, citation_style)


def _quotes(sources: list[Source]) -> list[tuple[Source, str]]:
    """A document's quotes: its best window's clause, and a second window's when it scores nearly
    as well and is other words."""
    readable = [s for s in sources if s.text.strip()]
    ranked = sorted(readable, key=lambda s: -(s.answer_score if s.answer_score is not None else -1.0))
    quotes: list[tuple[Source, str]] = []
    for source in ranked:
        if len(quotes) == 2:
            break
        if quotes and (
            source.answer_score is None
            or quotes[0][0].answer_score is None
            or source.answer_score < SECOND_QUOTE_SHARE * quotes[0][0].answer_score
        ):
            break
        text = _verbatim(_clause(source), source)
        if text and not any(_same(text, quoted) for _, quoted in quotes):
            quotes.append((source, text))
    return quotes


def _stated(question: str, quotes: list[tuple[Source, str]], own) -> tuple[str, list[tuple[Source, str]]]:
    """A row's value first, as the answer about its document alone opens ("The laws of New York
    govern [1]."), and its quotes: the first widened where the value sits in the sentence next to
    it; a second that states no value of the kind is filler beside a stated one, and left out.
    ("", `quotes`) where the topic asks for no typed value or the first quote states none."""
    if not question or not quotes:
        return "", quotes
    lead, text = quotes[0]
    found = direct.opening(question, [direct.Quote(lead, text)], own)
    if found is None or found.added or not found.states_value:
        return "", quotes
    if found.lead_text:
        if "|" in found.lead_text:
            return "", quotes  # the sentence holding the value cannot be quoted whole in a cell
        text = _verbatim(found.lead_text, lead)
    kept = [(lead, text)]
    for source, other in quotes[1:]:
        alone = direct.opening(question, [direct.Quote(source, other)], own)
        if alone is not None and alone.states_value and not alone.added:
            kept.append((source, other))
    return found.sentence, kept


def _clause(source: Source) -> str:
    if source.focus.strip():
        return quoted_clause(source)
    return first_sentence(" ".join(source.text.split()))


def _verbatim(text: str, source: Source) -> str:
    """`text` (the source's own words) without a planted instruction, and cut before a "|", which
    would end the table cell ("" when nothing comes before it)."""
    text = " ".join(without_planted(text, source).split())
    if "|" in text:
        kept = text[: text.index("|")].rstrip(" ,;:")
        text = kept + OMISSION if kept else ""
    return text


def _same(a: str, b: str) -> bool:
    x, y = " ".join(a.split()), " ".join(b.split())
    return x in y or y in x or x[:80] == y[:80]


def _cell(text: str) -> str:
    """Text of ours (a title, a heading) as one table cell: no "|" (it would end the cell), no line
    break, and no double quote mark (verification reads the text between quote marks before a
    citation marker as a quote of the source: a title's 'the "Hydraspin" deal' would not be)."""
    return " ".join(text.replace("|", "/").translate(_DOUBLE_QUOTES).split())


_DOUBLE_QUOTES = str.maketrans({'"': "'", "\u201c": "\u2018", "\u201d": "\u2019"})
