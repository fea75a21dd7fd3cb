"""LegalBench-RAG's retrieval metric (Pipitone & Houir Alami, 2024) and its query file format.

Per query, over the top-k retrieved spans (file + [start, end) in the original file's characters):
- precision@k = retrieved characters inside gold spans / all retrieved characters
- recall@k = gold characters covered by retrieved spans / all gold characters
Both are averaged over queries and reported in percent. A query with nothing retrieved scores 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_KS = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class Span:
    """[start, end) in code points of one file, named by its path relative to the corpus root."""

    file_path: str
    start: int
    end: int

    def __post_init__(self):
        if not 0 <= self.start < self.end:
            raise ValueError(f"bad span [{self.start}, {self.end}) in {self.file_path}")

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class BenchmarkQuery:
    query_id: str
    query: str
    gold: tuple[Span, ...]
    category: str = ""


def _span(snippet: dict) -> Span:
    start, end = snippet["span"]  # exactly two offsets (ValueError otherwise)
    return Span(snippet["file_path"], int(start), int(end))


def load_queries(path: Path) -> list[BenchmarkQuery]:
    """The `tests` of a LegalBench-RAG query file (`{"tests": [{"query", "snippets", ...}]}`)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    tests = data["tests"] if isinstance(data, dict) else data
    queries = []
    for i, test in enumerate(tests):
        gold = tuple(_span(snippet) for snippet in test["snippets"])
        if not gold:
            raise ValueError(f"query {i} has no snippets: nothing to score it against")
        queries.append(
            BenchmarkQuery(
                query_id=str(test.get("query_id") or f"q{i}"),
                query=test["query"],
                gold=gold,
                category=test.get("cuad_category", ""),
            )
        )
    return queries


def _overlap(a: Span, b: Span) -> int:
    if a.file_path != b.file_path:
        return 0
    return max(0, min(a.end, b.end) - max(a.start, b.start))


def _covered(gold: Span, retrieved: Iterable[Span]) -> int:
    """Characters of `gold` inside the union of `retrieved` (overlapping retrievals count once)."""
    pieces = sorted((max(r.start, gold.start), min(r.end, gold.end)) for r in retrieved if _overlap(r, gold))
    covered, reach = 0, gold.start
    for start, end in pieces:
        start = max(start, reach)
        if end > start:
            covered += end - start
            reach = end
    return covered


def precision(retrieved: Sequence[Span], gold: Sequence[Span]) -> float:
    """Share (0..1) of the retrieved characters that lie inside gold spans."""
    total = sum(len(span) for span in retrieved)
    if not total:
        return 0.0
    return sum(_covered(span, gold) for span in retrieved) / total


def recall(retrieved: Sequence[Span], gold: Sequence[Span]) -> float:
    """Share (0..1) of the gold characters covered by the retrieved spans."""
    total = sum(len(span) for span in gold)
    return sum(_covered(span, retrieved) for span in gold) / total


def score(
    runs: Sequence[tuple[Sequence[Span], Sequence[Span]]], ks: Sequence[int] = DEFAULT_KS
) -> dict[str, dict[str, float]]:
    """{"k": {"precision": %, "recall": %}} averaged over (retrieved best first, gold) pairs."""
    result = {}
    for k in ks:
        p = [precision(retrieved[:k], gold) for retrieved, gold in runs]
        r = [recall(retrieved[:k], gold) for retrieved, gold in runs]
        n = max(len(runs), 1)
        result[str(k)] = {"precision": 100 * sum(p) / n, "recall": 100 * sum(r) / n}
    return result
