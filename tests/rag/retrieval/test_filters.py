"""SearchFilters: request validation, narrowing one filter by another, and every filter field
applied inside each search's SQL."""

from __future__ import annotations

import functools
from datetime import date

import pytest

from rag.ingest import embedding
from rag.retrieval import SearchFilters, hybrid_search, keyword_search, semantic_search
from ragsite.exceptions import InvalidQuery

# --- validation (no database) -------------------------------------------------------------------


def test_a_valid_request_is_normalized():
    filters = SearchFilters.from_request(
        {
            "date_range_start": "2020-01-01",
            "date_range_end": date(2020, 12, 31),
            "jurisdictions": "Colorado",
            "doc_types": ["contract", "memo", "contract"],
            "source_types": ["statute"],
            "case_ids": [3, "4"],
            "document_ids": 7,
            "metadata": {"party": ["Acme", "Globex"], "year": 2023},
        }
    )
    assert filters == SearchFilters(
        date_range_start=date(2020, 1, 1),
        date_range_end=date(2020, 12, 31),
        jurisdictions=("Colorado",),
        doc_types=("contract", "memo"),
        source_types=("statute",),
        case_ids=(3, 4),
        document_ids=(7,),
        metadata={"party": ["Acme", "Globex"], "year": 2023},
    )
    assert SearchFilters.from_request(None).is_empty() and SearchFilters.from_request({}).is_empty()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"date_range_start": "01/02/2020"}, "date_range_start"),
        ({"date_range_end": "2020-02-30"}, "date_range_end"),
        ({"date_range_start": 20200101}, "date_range_start"),
        ({"date_range_start": "2021-01-01", "date_range_end": "2020-01-01"}, "date_range_start"),
        ({"doc_types": ["contract", "novel"]}, "doc_types"),
        ({"source_types": ["blog"]}, "source_types"),
        ({"jurisdictions": ["", "Texas"]}, "jurisdictions"),
        ({"jurisdictions": [1]}, "jurisdictions"),
        ({"case_ids": ["abc"]}, "case_ids"),
        ({"case_ids": [1.5]}, "case_ids"),
        ({"document_ids": [True]}, "document_ids"),
        ({"document_ids": [-3]}, "document_ids"),
        ({"document_ids": list(range(1, 502))}, "document_ids"),
        ({"metadata": ["party", "Acme"]}, "metadata"),
        ({"metadata": {"party": {"name": "Acme"}}}, "metadata"),
        ({"metadata": {"party": [["Acme"]]}}, "metadata"),
        ({"metadata": {"party": []}}, "metadata"),
        ({"metadata": {"party": None}}, "metadata"),
        ({"tenant_id": 5}, "tenant_id"),
    ],
)
def test_bad_values_are_invalid_queries_naming_the_field(data, field):
    with pytest.raises(InvalidQuery) as caught:
        SearchFilters.from_request(data)
    assert field in caught.value.details
    assert caught.value.status_code == 400


def test_every_bad_field_is_reported_at_once():
    with pytest.raises(InvalidQuery) as caught:
        SearchFilters.from_request({"doc_types": ["x"], "case_ids": ["y"], "date_range_end": "z"})
    assert set(caught.value.details) == {"doc_types", "case_ids", "date_range_end"}


def test_filters_are_immutable():
    filters = SearchFilters(doc_types=["memo"], metadata={"party": "Acme"})
    assert filters.doc_types == ("memo",)
    with pytest.raises(TypeError):
        filters.metadata["party"] = "Globex"


# --- narrowing (no database) ---------------------------------------------------------------------

SCOPE = SearchFilters(
    date_range_start=date(2020, 1, 1),
    date_range_end=date(2030, 1, 1),
    jurisdictions=("Colorado", "Texas"),
    doc_types=("memo", "act"),
    source_types=("statute",),
    case_ids=(1, 2),
    document_ids=(5, 6),
    years=(2021, 2022),
    metadata={"year": 2023, "matter": "M-1"},
)


def test_narrowed_keeps_what_both_allow_and_never_widens():
    call = SearchFilters(
        date_range_end=date(2022, 1, 1),
        jurisdictions=("colorado", "Ohio"),
        case_ids=(2, 3),
        years=(2022,),
        metadata={"year": "2023", "party": "Acme"},
    )
    both = SCOPE.narrowed(call)
    assert (both.date_range_start, both.date_range_end) == (date(2020, 1, 1), date(2022, 1, 1))
    assert both.jurisdictions == ("Colorado",) and both.case_ids == (2,) and both.years == (2022,)
    assert both.doc_types == ("memo", "act") and both.document_ids == (5, 6)  # left to the scope
    assert set(both.metadata["year"]) == {2023, "2023"} and both.metadata["party"] == "Acme"
    assert both.metadata["matter"] == "M-1"
    assert SCOPE.narrowed(SearchFilters()) == SCOPE and SearchFilters().narrowed(call) == call


@pytest.mark.parametrize(
    "contradiction",
    [
        {"date_range_start": date(2031, 1, 1)},
        {"date_range_end": date(2019, 12, 31)},
        {"jurisdictions": ("Ohio",)},
        {"doc_types": ("contract",)},
        {"source_types": ("secondary",)},
        {"case_ids": (3,)},
        {"document_ids": (7,)},
        {"years": (2023,)},
        {"metadata": {"matter": ["M-2", "M-3"]}},
    ],
    ids=lambda fields: next(iter(fields)),
)
def test_narrowed_by_a_contradiction_is_none(contradiction):
    assert SCOPE.narrowed(SearchFilters(**contradiction)) is None


# --- applied in the SQL of every search -----------------------------------------------------------

TEXT = "The licensee shall pay royalties for the patent licence to {name} every quarter."


@pytest.fixture
def library(case, ingest_text, tenant):
    """Documents of `tenant` that differ in one filter field each (one chunk apiece)."""
    from rag import services as rag_services

    second_case = rag_services.case_create(tenant=tenant, name="Second matter")
    specs = {
        "old_colorado_contract": dict(
            doc_type="contract", jurisdiction="Colorado", document_date=date(2019, 5, 1)
        ),
        "new_texas_memo": dict(doc_type="memo", jurisdiction="Texas", document_date=date(2023, 3, 1)),
        "statute": dict(source_type="statute", doc_type="act", document_date=date(2021, 7, 1)),
        "acme_list": dict(metadata={"parties": ["Acme", "Globex"], "year": 2023}),
        "acme_scalar": dict(metadata={"parties": "Acme", "year": "2022"}),
        "initech": dict(metadata={"parties": "Initech", "year": "2023"}),
    }
    docs = {
        name: ingest_text(case, TEXT.format(name=name), filename=f"{name}.txt", **fields)
        for name, fields in specs.items()
    }
    docs["second_case"] = ingest_text(second_case, TEXT.format(name="second"), filename="second.txt")
    docs["second_case_id"] = second_case.pk
    return docs


@functools.cache
def _royalties_vector():
    return embedding.embed(["royalties for a patent licence"])[0]


def _semantic(tenant, filters):
    return semantic_search(tenant=tenant, query_vector=_royalties_vector(), k=20, filters=filters)


def _keyword(tenant, filters):
    return keyword_search(tenant=tenant, query="royalties patent licence", k=20, filters=filters)


def _hybrid(tenant, filters):
    return hybrid_search(tenant=tenant, query="royalties for a patent licence", k=20, filters=filters)


@pytest.mark.parametrize("search", [_semantic, _keyword, _hybrid], ids=["semantic", "keyword", "hybrid"])
def test_each_filter_field_restricts_every_search(tenant, library, search):
    def found(**fields) -> set[str]:
        ids = {hit.document_id for hit in search(tenant, SearchFilters(**fields))}
        return {name for name, doc in library.items() if getattr(doc, "pk", None) in ids}

    everything = {name for name in library if name != "second_case_id"}
    assert found() == everything
    assert found(date_range_start=date(2021, 1, 1)) == {"new_texas_memo", "statute"}
    assert found(date_range_end=date(2021, 7, 1)) == {"old_colorado_contract", "statute"}
    assert found(date_range_start=date(2020, 1, 1), date_range_end=date(2022, 1, 1)) == {"statute"}
    assert found(jurisdictions=("colorado", "Texas")) == {"old_colorado_contract", "new_texas_memo"}
    assert found(doc_types=("memo", "act")) == {"new_texas_memo", "statute"}
    assert found(source_types=("statute",)) == {"statute"}
    assert found(case_ids=(library["second_case_id"],)) == {"second_case"}
    assert found(document_ids=(library["statute"].pk, library["initech"].pk)) == {"statute", "initech"}
    # Metadata: scalar equality or membership of a list value; years as numbers or strings.
    assert found(metadata={"parties": "Acme"}) == {"acme_list", "acme_scalar"}
    assert found(metadata={"parties": ["Globex", "Initech"]}) == {"acme_list", "initech"}
    assert found(metadata={"year": 2023}) == {"acme_list", "initech"}
    assert found(metadata={"year": "2022"}) == {"acme_scalar"}
    assert found(metadata={"parties": "Acme", "year": 2023}) == {"acme_list"}
    assert found(metadata={"parties__0": "Acme"}) == set()  # keys are keys, never lookup paths
    assert found(doc_types=("memo",), jurisdictions=("Colorado",)) == set()


def test_years_are_four_digit_integers_or_integer_strings():
    assert SearchFilters.from_request({"years": ["2023", 2024, 2023]}).years == (2023, 2024)
    for bad in ([99], [True], ["twenty"], 2023.5):
        with pytest.raises(InvalidQuery) as refused:
            SearchFilters.from_request({"years": bad})
        assert "years" in refused.value.details
