"""The research memo of one or more stored answers: as plain text with numbered references, or as
a Word document whose citations are footnotes quoting the cited passage.

Built from the stored response (the audit row's `result`), so a memo shows exactly the answer the
user saw, with each citation's document title, page and quoted passage (`document.text[char_start:
char_end]`, which the pipeline stores as the citation's snippet). The answer's markers ("[1]",
"[doc_12]", whichever the citation style wrote) become footnote references. A citation the text
never marks is not quoted (a quote nothing in the answer relies on is filler to the reader): it is
only named, by title and page, as retrieved but not cited, so the memo still says what was read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from rag.pipeline.result import NOT_FOUND_MESSAGE

MARKER = re.compile(r"\[([^\[\]]{1,40})\]")
# Characters XML 1.0 refuses (a page break's form feed, say): a space in the memo.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
NOT_FOUND = "Not found in the documents."


@dataclass(frozen=True)
class Source:
    """One cited passage, as a footnote shows it."""

    title: str
    page: int
    page_end: int
    passage: str
    document_id: int
    char_start: int
    char_end: int

    @property
    def place(self) -> str:
        if self.page_end > self.page:
            return f"{self.title}, pages {self.page}\u2013{self.page_end}"  # an en dash
        return f"{self.title}, page {self.page}"

    @property
    def reference(self) -> str:
        return f"{self.place}: “{clean(self.passage)}”"


@dataclass(frozen=True)
class MemoEntry:
    """One question and its answer, split into text runs and the sources they cite in order."""

    question: str
    asked_at: datetime
    parts: tuple[str | Source, ...]  # answer text, with a Source where a footnote goes
    # What the reader was told instead of an answer ("None of the 25 documents checked contains a
    # non-compete clause.", "No: … does not contain …"); "" for the plain "not found".
    message: str
    confidence: float | None
    uncited: tuple[Source, ...] = ()  # citations the answer text never marks: named, not quoted

    @property
    def answered(self) -> bool:
        return any(isinstance(part, Source) or part.strip() for part in self.parts)

    @property
    def unanswered_text(self) -> str:
        """What the memo says for an answer not found: what the reader was told (the API's generic
        "not found" in the memo's words)."""
        return NOT_FOUND if self.message in ("", NOT_FOUND_MESSAGE) else self.message


def clean(text: str) -> str:
    """`text` with the characters a Word document cannot hold made spaces."""
    return _XML_INVALID.sub(" ", text)


def _source(citation: dict) -> Source:
    return Source(
        title=str(citation.get("title") or citation.get("source") or "Untitled document"),
        page=int(citation.get("page") or 1),
        page_end=int(citation.get("page_end") or citation.get("page") or 1),
        passage=str(citation.get("snippet") or ""),
        document_id=int(citation.get("document_id") or 0),
        char_start=int(citation.get("char_start") or 0),
        char_end=int(citation.get("char_end") or 0),
    )


def answer_parts(answer: str, citations: list[dict]) -> tuple[str | Source, ...]:
    """The answer as text runs and sources: each marker naming a citation is replaced by that
    citation's source (citations never marked are `uncited_sources`)."""
    by_marker: dict[str, dict] = {}
    for citation in citations:
        by_marker[str(citation.get("citation_id"))] = citation
        if citation.get("doc_id"):
            by_marker.setdefault(str(citation["doc_id"]), citation)
    parts: list[str | Source] = []
    marked: set[str] = set()
    last = 0
    for match in MARKER.finditer(answer):
        citation = by_marker.get(match.group(1))
        if citation is None:
            continue
        parts.append(answer[last : match.start()])
        parts.append(_source(citation))
        marked.add(str(citation.get("citation_id")))
        last = match.end()
    parts.append(answer[last:])
    return tuple(part for part in parts if not (isinstance(part, str) and part == ""))


def uncited_sources(answer: str, citations: list[dict]) -> tuple[Source, ...]:
    """The citations whose marker the answer text never writes, in order, each passage once."""
    cited = {part for part in answer_parts(answer, citations) if isinstance(part, Source)}
    return tuple(dict.fromkeys(s for s in map(_source, citations) if s not in cited))


def memo_entry(row) -> MemoEntry:
    """The memo entry of one audit row (`rag.models.AuditLog`) with its stored response."""
    result = row.result or {}
    answer, citations = result.get("answer") or "", list(result.get("citations") or [])
    return MemoEntry(
        question=row.query,
        asked_at=row.created_at,
        parts=answer_parts(answer, citations),
        message=str(result.get("message") or "").strip(),
        confidence=result.get("confidence_score", row.confidence),
        uncited=uncited_sources(answer, citations),
    )


def uncited_note(entry: MemoEntry) -> str:
    """One line naming the passages retrieved but not cited (no quote), or "" when none."""
    if not entry.uncited:
        return ""
    return f"Also retrieved, not cited in the answer: {'; '.join(s.place for s in entry.uncited)}."


def memo_text(entries: list[MemoEntry]) -> str:
    """The memo as plain text: each answer with numbered references, its sources listed after it
    (what "Copy with citations" puts on the clipboard)."""
    blocks = []
    for entry in entries:
        lines = [f"Question: {entry.question}", ""]
        text, sources = [], []
        for part in entry.parts:
            if isinstance(part, Source):
                if part not in sources:  # a passage cited twice keeps its number
                    sources.append(part)
                text.append(f"[{sources.index(part) + 1}]")
            else:
                text.append(part)
        answer = "".join(text).strip()
        if not entry.answered:
            answer = entry.unanswered_text
        lines.append(f"Answer: {answer}")
        if sources:
            lines += ["", "Sources:"]
            lines += [f"[{n}] {source.reference}" for n, source in enumerate(sources, 1)]
        if entry.uncited:
            lines += ["", uncited_note(entry)]
        blocks.append("\n".join(lines))
    return clean("\n\n---\n\n".join(blocks)) + "\n"
