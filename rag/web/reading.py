"""A document's text as the viewer shows it: split into pages, with one passage marked."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rag.models import Document
from rag.security.planted import shape_label


@dataclass(frozen=True)
class PageView:
    number: int
    before: str  # text before the marked passage (all of it when the page has no mark)
    marked: str  # the part of the marked passage on this page, "" if none
    after: str
    mark_starts: bool = False  # the marked passage starts on this page (its anchor goes here)
    ocr_confidence: float | None = None  # the page was read by OCR with this mean confidence
    ocr_low: bool = False  # ... under RAG_OCR_LOW_CONFIDENCE: the reader should check the original


def page_starts(document: Document, chunk_pages) -> list[tuple[int, int]]:
    """(page number, char offset where it starts), in order. Documents ingested before pages were
    recorded have only their passages' (page, offset) pairs in `chunk_pages`: a page starts at its
    first passage, and a page without one runs on in the page before it."""
    if document.page_starts:
        return list(enumerate(document.page_starts, start=1))
    first_offset: dict[int, int] = {}
    for page, offset in chunk_pages:
        first_offset[page] = min(offset, first_offset.get(page, offset))
    starts = sorted(first_offset.items()) or [(1, 0)]
    return [(starts[0][0], 0), *starts[1:]]


def pages(text: str, starts: list[tuple[int, int]], mark: tuple[int, int] | None) -> list[PageView]:
    """The text cut at `starts` ((number, offset) pairs in order), each page holding its part of
    `mark`, a (start, end) character range."""
    views = []
    offsets = [offset for _, offset in starts]
    for (number, start), end in zip(starts, [*offsets[1:], len(text)], strict=True):
        if mark and mark[0] < end and mark[1] > start:
            lo, hi = max(mark[0], start), min(mark[1], end)
            views.append(PageView(number, text[start:lo], text[lo:hi], text[hi:end], lo == mark[0]))
        else:
            views.append(PageView(number, text[start:end], "", ""))
    return views


def with_ocr(views: list[PageView], confidence: dict, low: dict[int, float]) -> list[PageView]:
    """`views` with each OCR-read page's confidence (`Document.ocr_confidence`), and the pages in
    `low` (`scans.low_confidence_pages`) marked for checking against the original."""
    read = {int(page): float(value) for page, value in (confidence or {}).items()}
    return [
        replace(view, ocr_confidence=read[view.number], ocr_low=view.number in low)
        if view.number in read
        else view
        for view in views
    ]


@dataclass(frozen=True)
class FlaggedPassage:
    """A passage flagged at ingest as carrying instructions planted for a model."""

    number: int  # 1-based, as answers cite "[Title, Chunk 3]"
    page: int
    start: int  # character range in the document's text, for the viewer's mark
    end: int
    reasons: tuple[str, ...]  # readable labels of the shapes found


def flagged_passages(chunks) -> list[FlaggedPassage]:
    """The flagged passages among `chunks` (a document's, in order), with readable reasons."""
    return [
        FlaggedPassage(
            chunk.index + 1,
            chunk.page_start,
            chunk.char_start,
            chunk.char_end,
            tuple(shape_label(name) for name in chunk.injection_flags),
        )
        for chunk in chunks
        if chunk.injection_flags
    ]
