"""Per-request configuration of a query (stage-pipeline spec, "Per-Request Configuration").

`QueryConfig.from_options(**options)` validates everything a caller may set and fills the
defaults from settings; an unknown option or a bad value is `InvalidQuery` naming each field, so a
typo ("topk") is refused instead of silently ignored. Options left at None are decided by a
later stage: the template's citation style, strictness and follow-up count, the threshold of
`RAG_MIN_SIMILARITY_THRESHOLD`.

The specifications' other spellings are accepted too: the stage-pipeline spec's `config_metadata`
object holds the same options (each option given once: there or at the top level), and the
service-interface spec's `filters.max_results` is `top_k` and `filters.source` names the one
document to search (resolved against the tenant by `rag.pipeline.scope`).
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
MAX_SOURCE_NAME = 255  # Document.original_filename's and title's length
CONFIG_METADATA = "config_metadata"
# The service-interface spec's filter keys that are not search filters (SearchFilters).
SOURCE_FILTER, MAX_RESULTS_FILTER = "source", "max_results"
# Fields set from `filters`, never options of their own.
_FILTER_ONLY_FIELDS = frozenset({"source"})


@dataclass(frozen=True)
class QueryConfig:
    """Validated options of one query. See "Query options" in docs/architecture.md for each."""

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
    source: str | None = None  # filters.source: a document's file name or title (rag.pipeline.scope)

    @classmethod
    def from_options(cls, **options: Any) -> QueryConfig:
        """Validate `options` (JSON-like values; None means "default") into a config; the options
        may also come in a `config_metadata` object, and `filters` may hold the spec's `source`
        and `max_results`. `InvalidQuery` names each bad field as the request spelled it."""
        errors: dict[str, str] = {}
        options, from_metadata = _merge_config_metadata(options, errors)
        # `source` is set from filters.source only (where the spec puts it).
        errors.update({key: "Unknown option." for key in options if key in _FILTER_ONLY_FIELDS})
        options = {key: value for key, value in options.items() if key not in _FILTER_ONLY_FIELDS}
        options = _split_spec_filters(options, errors)
        known = {f.name for f in dataclasses.fields(cls)}
        errors.update({key: "Unknown option." for key in options if key not in known})
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
            "source": _text(values, "source", MAX_SOURCE_NAME, errors),
        }
        try:
            checked["filters"] = SearchFilters.from_request(values.get("filters"))
        except InvalidQuery as exc:
            # Errors of single filters are "filters.<name>"; filters that are not an object, "filters".
            prefix = "filters." if isinstance(values.get("filters"), Mapping) else ""
            errors.update({f"{prefix}{key}": message for key, message in exc.details.items()})
        if errors:
            raise InvalidQuery(
                "Some query options are not valid.", details=_as_spelled(errors, from_metadata)
            )
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


def refuse_style_conflict(config: QueryConfig, template) -> None:
    """`InvalidQuery` when the request names a template (`template_id`) and a `response_style`
    other than that template's: one template answers in one style, so one of the two would be
    silently ignored. The same style twice (the orchestration spec's example) is fine."""
    if config.template_id and config.response_style and config.response_style != template.response_style:
        raise InvalidQuery(
            "template_id and response_style disagree; give one of them, or the template's own style.",
            details={
                "response_style": f"Template {template.template_id!r} answers in the "
                f"{template.response_style!r} style, not {config.response_style!r}.",
                "template_id": f"Its response_style is {template.response_style!r}.",
            },
        )


def _merge_config_metadata(options: dict, errors: dict) -> tuple[dict, frozenset]:
    """`options` with the options of its `config_metadata` object moved to the top level, and the
    names that came from there. An option given both ways is an error (which one would win?)."""
    if options.get(CONFIG_METADATA) is None:
        return {key: value for key, value in options.items() if key != CONFIG_METADATA}, frozenset()
    options = dict(options)
    nested = options.pop(CONFIG_METADATA)
    if not isinstance(nested, Mapping):
        errors[CONFIG_METADATA] = "Must be an object of query options."
        return options, frozenset()
    for key, value in nested.items():
        if options.get(key) is not None:
            errors[f"{CONFIG_METADATA}.{key}"] = "Also given at the top level; give it once."
        else:
            options[key] = value
    return options, frozenset(nested)


def _split_spec_filters(options: dict, errors: dict) -> dict:
    """`options` with the service-interface spec's `filters.max_results` moved to `top_k` and
    `filters.source` to `source`; the rest of `filters` stays search filters."""
    filters = options.get("filters")
    if not isinstance(filters, Mapping) or not {SOURCE_FILTER, MAX_RESULTS_FILTER} & set(filters):
        return options
    filters = dict(filters)
    options = {**options, "filters": filters}
    if MAX_RESULTS_FILTER in filters:
        max_results = filters.pop(MAX_RESULTS_FILTER)
        problems: dict[str, str] = {}
        top_k = _int({"top_k": max_results}, "top_k", None, 1, MAX_TOP_K, problems)
        if options.get("top_k") is not None:
            problems["top_k"] = "The same as top_k; give one of them."
        if problems:
            errors[f"filters.{MAX_RESULTS_FILTER}"] = problems["top_k"]
        else:
            options["top_k"] = top_k
    if SOURCE_FILTER in filters:
        problems = {}
        source = _text({"source": filters.pop(SOURCE_FILTER)}, "source", MAX_SOURCE_NAME, problems)
        if problems:
            errors[f"filters.{SOURCE_FILTER}"] = problems["source"]
        else:
            options["source"] = source
    return options


def _as_spelled(errors: dict, from_metadata: frozenset) -> dict:
    """Error names as the request spelled them: an option given in config_metadata is
    "config_metadata.<name>" (and its filters "config_metadata.filters.<name>")."""
    return {
        f"{CONFIG_METADATA}.{key}" if key.split(".")[0] in from_metadata else key: message
        for key, message in errors.items()
    }


def _filters_key(filters: SearchFilters) -> dict:
    data = {f.name: getattr(filters, f.name) for f in dataclasses.fields(filters)}
    data["metadata"] = dict(filters.metadata)
    # What the reader sees (confidential documents, walls) changes the answer: by its digest.
    data["visibility"] = filters.visibility.digest() if filters.visibility is not None else None
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
