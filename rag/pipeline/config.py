"""Per-request configuration of a query (stage-pipeline spec, "Per-Request Configuration").

`QueryConfig.from_options(**options)` validates everything a caller may set and fills the
defaults from settings; an unknown option or a bad value is `InvalidQuery` naming each field, so a
typo ("topk") is refused instead of silently ignored. Options left at None are decided by a
later stage: the template's citation style, strictness and follow-up count, the threshold of
`RAG_MIN_SIMILARITY_THRESHOLD`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from rag.retrieval.filters import SearchFilters
from rag.retrieval.hybrid import MODES
from rag.retrieval.service import MAX_TOP_K
from ragsite.exceptions import InvalidQuery
from templates_admin.rendering import CITATION_STYLES, RESPONSE_STYLES, STRICTNESS_LEVELS

MAX_FOLLOW_UPS = 5
MAX_NEW_TOKENS = 8192
MAX_REASONING_DEPTH = 10
TOKEN_BUDGET_RANGE = (200, 100_000)
MAX_CONVERSATION_ID = 100


@dataclass(frozen=True)
class QueryConfig:
    """Validated options of one query. See the README's "Query options" table for each."""

    top_k: int
    similarity_threshold: float | None = None
    reranking_enabled: bool = True
    max_chunks: int | None = None
    cot_enabled: bool = False
    show_cot_steps: bool = False
    max_reasoning_depth: int = 3
    temperature: float = 0.1
    max_new_tokens: int = 1024
    strictness: str | None = None
    citation_style: str | None = None
    response_style: str | None = None
    follow_up_count: int | None = None
    template_id: str | None = None
    token_budget: int = 3000
    filters: SearchFilters = field(default_factory=SearchFilters)
    dry_run: bool = False
    search_mode: str = "hybrid"
    conversation_id: str | None = None
    use_cache: bool = True
    agentic: bool = False  # gather evidence with rag.agent's loop instead of one search

    @classmethod
    def from_options(cls, **options: Any) -> QueryConfig:
        """Validate `options` (JSON-like values; None means "default") into a config."""
        known = {f.name for f in dataclasses.fields(cls)}
        errors: dict[str, str] = {key: "Unknown option." for key in options if key not in known}
        values = {key: value for key, value in options.items() if key in known and value is not None}
        checked: dict[str, Any] = {
            "top_k": _int(values, "top_k", settings.RAG_DEFAULT_TOP_K, 1, MAX_TOP_K, errors),
            "max_chunks": _int(values, "max_chunks", None, 1, MAX_TOP_K, errors),
            "max_reasoning_depth": _int(values, "max_reasoning_depth", 3, 1, MAX_REASONING_DEPTH, errors),
            "max_new_tokens": _int(values, "max_new_tokens", 1024, 1, MAX_NEW_TOKENS, errors),
            "follow_up_count": _int(values, "follow_up_count", None, 0, MAX_FOLLOW_UPS, errors),
            "token_budget": _int(
                values, "token_budget", settings.RAG_TOKEN_BUDGET, *TOKEN_BUDGET_RANGE, errors
            ),
            "similarity_threshold": _number(values, "similarity_threshold", None, -1.0, 1.0, errors),
            "temperature": _number(values, "temperature", 0.1, 0.0, 1.0, errors),
            "reranking_enabled": _bool(values, "reranking_enabled", settings.ENABLE_RERANKING, errors),
            "cot_enabled": _bool(values, "cot_enabled", settings.ENABLE_COT, errors),
            "show_cot_steps": _bool(values, "show_cot_steps", False, errors),
            "dry_run": _bool(values, "dry_run", False, errors),
            "use_cache": _bool(values, "use_cache", True, errors),
            "agentic": _bool(values, "agentic", False, errors),
            "strictness": _choice(values, "strictness", STRICTNESS_LEVELS, errors),
            "citation_style": _choice(values, "citation_style", CITATION_STYLES, errors),
            "response_style": _choice(values, "response_style", RESPONSE_STYLES, errors),
            "search_mode": _choice(values, "search_mode", MODES, errors) or "hybrid",
            "template_id": _text(values, "template_id", 100, errors),
            "conversation_id": _text(values, "conversation_id", MAX_CONVERSATION_ID, errors),
        }
        try:
            checked["filters"] = SearchFilters.from_request(values.get("filters"))
        except InvalidQuery as exc:
            # Errors of single filters are "filters.<name>"; filters that are not an object, "filters".
            prefix = "filters." if isinstance(values.get("filters"), Mapping) else ""
            errors.update({f"{prefix}{key}": message for key, message in exc.details.items()})
        if errors:
            raise InvalidQuery("Some query options are not valid.", details=errors)
        return cls(**checked)

    @property
    def context_passages(self) -> int:
        """How many passages may reach the prompt: max_chunks, else top_k, never over RAG_MAX_SNIPPETS."""
        return min(self.max_chunks or self.top_k, settings.RAG_MAX_SNIPPETS)

    def cache_fields(self) -> dict:
        """The options that change a result (not dry_run, use_cache or conversation_id;
        show_cot_steps does: the steps are in the result or not)."""
        skipped = {"dry_run", "use_cache", "conversation_id", "filters"}
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in skipped}
        data["filters"] = _filters_key(self.filters)
        return data


def _filters_key(filters: SearchFilters) -> dict:
    data = {f.name: getattr(filters, f.name) for f in dataclasses.fields(filters)}
    data["metadata"] = dict(filters.metadata)
    return data


def _int(values: Mapping, name: str, default, low: int, high: int, errors: dict) -> int | None:
    value = values.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        errors[name] = "Must be an integer."
    elif not low <= value <= high:
        errors[name] = f"Must be between {low} and {high}."
    return value


def _number(values: Mapping, name: str, default, low: float, high: float, errors: dict) -> float | None:
    value = values.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        errors[name] = "Must be a number."
        return None
    if not low <= value <= high:
        errors[name] = f"Must be between {low:g} and {high:g}."
    return float(value)


def _bool(values: Mapping, name: str, default: bool, errors: dict) -> bool:
    value = values.get(name, default)
    if not isinstance(value, bool):
        errors[name] = "Must be true or false."
        return default
    return value


def _choice(values: Mapping, name: str, choices, errors: dict) -> str | None:
    value = values.get(name)
    if value is not None and value not in choices:
        errors[name] = f"One of {', '.join(choices)}."
        return None
    return value


def _text(values: Mapping, name: str, max_length: int, errors: dict) -> str | None:
    value = values.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        errors[name] = f"A non-empty string of at most {max_length} characters."
        return None
    if "\x00" in value:  # PostgreSQL text cannot hold it: the audit row would be lost
        errors[name] = "Must not contain NUL characters."
        return None
    return value.strip()
