"""QueryConfig.from_options: defaults from settings, every invalid value and unknown option refused
with the field named, filter errors under "filters."."""

import dataclasses
import datetime

import pytest

from rag.pipeline.config import QueryConfig
from rag.retrieval.filters import SearchFilters
from ragsite.exceptions import InvalidQuery


def test_defaults_come_from_settings(settings):
    settings.RAG_DEFAULT_TOP_K = 7
    settings.RAG_TOKEN_BUDGET = 1234
    settings.ENABLE_RERANKING = False
    settings.ENABLE_COT = False
    config = QueryConfig.from_options()
    assert config == QueryConfig(
        top_k=7,
        similarity_threshold=None,
        reranking_enabled=False,
        max_chunks=None,
        cot_enabled=False,
        show_cot_steps=False,
        max_reasoning_depth=3,
        temperature=0.1,
        max_new_tokens=1024,
        strictness=None,
        citation_style=None,
        response_style=None,
        follow_up_count=None,
        template_id=None,
        token_budget=1234,
        filters=SearchFilters(),
        dry_run=False,
        search_mode="hybrid",
        conversation_id=None,
        use_cache=True,
    )
    settings.ENABLE_RERANKING = True
    settings.ENABLE_COT = True
    assert QueryConfig.from_options().reranking_enabled is True
    assert QueryConfig.from_options().cot_enabled is True


def test_none_means_default(settings):
    settings.RAG_DEFAULT_TOP_K = 4
    config = QueryConfig.from_options(top_k=None, token_budget=None, filters=None, strictness=None)
    assert config == QueryConfig.from_options()
    assert config.top_k == 4


def test_valid_values_are_kept():
    config = QueryConfig.from_options(
        top_k=100,
        similarity_threshold=-1,
        reranking_enabled=False,
        max_chunks=3,
        max_reasoning_depth=10,
        temperature=1,
        max_new_tokens=8192,
        strictness="strict",
        citation_style="bracketed_ids",
        response_style="detailed",
        follow_up_count=0,
        template_id="  my_template ",
        token_budget=200,
        filters={"doc_types": ["contract"], "date_range_start": "2020-01-01"},
        dry_run=True,
        search_mode="keyword",
        conversation_id=" conv-1 ",
        use_cache=False,
    )
    assert (config.top_k, config.similarity_threshold, config.temperature) == (100, -1.0, 1.0)
    assert isinstance(config.similarity_threshold, float) and isinstance(config.temperature, float)
    assert (config.max_chunks, config.max_reasoning_depth, config.max_new_tokens) == (3, 10, 8192)
    assert (config.strictness, config.citation_style, config.response_style) == (
        "strict",
        "bracketed_ids",
        "detailed",
    )
    assert (config.follow_up_count, config.token_budget, config.search_mode) == (0, 200, "keyword")
    assert (config.template_id, config.conversation_id) == ("my_template", "conv-1")
    assert config.filters == SearchFilters(
        doc_types=("contract",), date_range_start=datetime.date(2020, 1, 1)
    )
    assert (config.dry_run, config.use_cache, config.reranking_enabled) == (True, False, False)


def test_the_config_is_frozen():
    config = QueryConfig.from_options()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.top_k = 50


INVALID = [
    ("top_k", 0),
    ("top_k", 101),
    ("top_k", "5"),
    ("top_k", True),
    ("top_k", 2.5),
    ("max_chunks", 0),
    ("max_chunks", 101),
    ("max_reasoning_depth", 0),
    ("max_reasoning_depth", 11),
    ("max_new_tokens", 0),
    ("max_new_tokens", 8193),
    ("follow_up_count", -1),
    ("follow_up_count", 6),
    ("follow_up_count", "2"),
    ("token_budget", 199),
    ("token_budget", 100_001),
    ("similarity_threshold", 1.5),
    ("similarity_threshold", -1.01),
    ("similarity_threshold", "0.5"),
    ("similarity_threshold", float("nan")),
    ("similarity_threshold", False),
    ("temperature", -0.1),
    ("temperature", 1.1),
    ("temperature", float("inf")),
    ("reranking_enabled", "yes"),
    ("reranking_enabled", 1),
    ("cot_enabled", "true"),
    ("show_cot_steps", 0),
    ("dry_run", "false"),
    ("use_cache", 1),
    ("strictness", "harsh"),
    ("citation_style", "footnotes"),
    ("response_style", "verbose"),
    ("search_mode", "fuzzy"),
    ("template_id", ""),
    ("template_id", "   "),
    ("template_id", 12),
    ("template_id", "t" * 101),
    ("conversation_id", "c" * 101),
    ("conversation_id", ["conv"]),
    ("conversation_id", "conv\x00-1"),  # PostgreSQL text cannot store it
    ("template_id", "legal\x00"),
]


@pytest.mark.parametrize(("field", "value"), INVALID)
def test_each_invalid_value_is_refused_naming_its_field(field, value):
    with pytest.raises(InvalidQuery) as caught:
        QueryConfig.from_options(**{field: value})
    assert set(caught.value.details) == {field}
    assert caught.value.details[field]


def test_an_unknown_option_is_refused_not_ignored():
    with pytest.raises(InvalidQuery) as caught:
        QueryConfig.from_options(topk=5, question="x")
    assert caught.value.details == {"topk": "Unknown option.", "question": "Unknown option."}


def test_a_nul_character_in_a_filter_string_is_refused():
    with pytest.raises(InvalidQuery) as caught:
        QueryConfig.from_options(filters={"jurisdictions": ["Delaware\x00"]})
    assert caught.value.details == {"filters.jurisdictions": "Must not contain NUL characters."}


def test_all_errors_are_reported_at_once():
    with pytest.raises(InvalidQuery) as caught:
        QueryConfig.from_options(top_k=0, strictness="harsh", colour="red", filters={"doc_types": ["novel"]})
    assert set(caught.value.details) == {"top_k", "strictness", "colour", "filters.doc_types"}


def test_filter_errors_are_prefixed_with_filters():
    with pytest.raises(InvalidQuery) as caught:
        QueryConfig.from_options(
            filters={
                "doc_types": ["novel"],
                "date_range_start": "yesterday",
                "case_ids": ["abc"],
                "colour": "red",
            }
        )
    details = caught.value.details
    assert set(details) == {
        "filters.doc_types",
        "filters.date_range_start",
        "filters.case_ids",
        "filters.colour",
    }
    assert details["filters.colour"] == "Unknown filter."
    assert details["filters.date_range_start"] == "Must be a date in the form YYYY-MM-DD."


def test_filters_that_are_not_an_object_are_named_filters():
    with pytest.raises(InvalidQuery) as caught:
        QueryConfig.from_options(filters=["contract"])
    assert caught.value.details == {"filters": "Must be an object."}


def test_an_inverted_date_range_is_a_filter_error():
    with pytest.raises(InvalidQuery) as caught:
        QueryConfig.from_options(filters={"date_range_start": "2021-01-01", "date_range_end": "2020-01-01"})
    assert set(caught.value.details) == {"filters.date_range_start"}


def test_context_passages_is_max_chunks_else_top_k_capped_by_max_snippets(settings):
    settings.RAG_MAX_SNIPPETS = 6
    assert QueryConfig.from_options(top_k=4).context_passages == 4
    assert QueryConfig.from_options(top_k=9).context_passages == 6
    assert QueryConfig.from_options(top_k=9, max_chunks=2).context_passages == 2
    assert QueryConfig.from_options(top_k=3, max_chunks=8).context_passages == 6


def test_cache_fields_hold_the_answer_changing_options_only():
    config = QueryConfig.from_options(
        top_k=3, dry_run=True, use_cache=False, conversation_id="c1",
        filters={"jurisdictions": ["Delaware"], "metadata": {"year": 2023}},
    )  # fmt: skip
    fields = config.cache_fields()
    assert not {"dry_run", "use_cache", "conversation_id"} & set(fields)
    assert fields["top_k"] == 3
    assert fields["filters"]["jurisdictions"] == ("Delaware",)
    assert fields["filters"]["metadata"] == {"year": 2023}
    # Options that only decide how the run is done do not change the key...
    same = QueryConfig.from_options(
        top_k=3, filters={"jurisdictions": ["Delaware"], "metadata": {"year": 2023}}
    )
    assert same.cache_fields() == fields
    # ...options that change the answer do.
    for change in (
        {"top_k": 4},
        {"citation_style": "end_list"},
        {"template_id": "x"},
        {"strictness": "strict"},
        {"show_cot_steps": True},  # the steps are in the result or not
        {"max_reasoning_depth": 2},
    ):
        assert (
            QueryConfig.from_options(**{"top_k": 3, **change}).cache_fields()
            != QueryConfig.from_options(top_k=3).cache_fields()
        )
