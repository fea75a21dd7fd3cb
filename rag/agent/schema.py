"""The agentic spec's JSON shapes as dataclasses (sections 3 and 8), each with `as_dict()` in the
spec's field names, so a trace can be returned and audited as the spec writes it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

INTENTS = ("qa", "list", "summarize", "compare")
STRATEGIES = ("keyword", "semantic", "hybrid")
STATUSES = ("enough", "more", "clarify")
CLARIFICATIONS = ("no_results", "overload")
OPERATORS = ("=", "in", ">=", "<=", ">", "<")


@dataclass(frozen=True)
class Constraint:
    field: str
    operator: str
    value: Any


@dataclass(frozen=True)
class Decomposition:
    intent: str
    primary_buckets: list[str]
    constraints: list[Constraint]
    subqueries: list[str]

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: dict

    def as_dict(self) -> dict:
        return {"tool": self.tool, "args": dict(self.args)}


@dataclass(frozen=True)
class Plan:
    target_buckets: list[str]
    strategy: str
    initial_queries: list[str]
    filters_hint: dict
    max_tool_calls: int

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Clarification:
    type: str  # "no_results" | "overload"
    missing_info: str
    message: str  # what the user reads
    tried: list[dict] = field(default_factory=list)  # the tool calls that were made
    counts: dict = field(default_factory=dict)  # overload: documents found, by narrowing filter
    # overload: where a table of every matching document can be built instead (one per case):
    # {"case_id", "case", "url"} of the staff UI's review page (rag.review.tables)
    review_tables: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Review:
    status: str
    reason: str
    next_tool_call: ToolCall | None = None
    clarification_details: Clarification | None = None

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "reason": self.reason,
            "next_tool_call": self.next_tool_call.as_dict() if self.next_tool_call else None,
            "clarification_details": (
                self.clarification_details.as_dict() if self.clarification_details else None
            ),
        }
