"""The agent's tools: the spec's schemas, the filter bridge down to the SQL, bad calls reported
back, tenant scoping, and the request's scope bounding every call and every planner probe."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from rag.agent.planner import RulePlanner
from rag.agent.scope import AgentScope
from rag.agent.tools import OUTSIDE_SCOPE, TOOLS, AgentTools, bucket_names, doc_id_of
from rag.retrieval.filters import SearchFilters
from rag.retrieval.service import Reader
from tenants.models import Role
from tests.rag.pipeline.conftest import INSIDE_TITLE, OUTSIDE_CASE, OUTSIDE_TITLE, make_look_alikes

pytestmark = pytest.mark.django_db


def test_the_tools_have_the_specs_schemas():
    by_name = {tool["name"]: tool for tool in TOOLS}
    assert set(by_name) == {"search_text", "search_semantic", "get_document_metadata"}
    text = by_name["search_text"]["parameters"]
    assert text["required"] == ["bucket", "query"]
    assert set(text["properties"]) == {"bucket", "query", "filters", "top_k", "context_chars", "doc_id"}
    assert (
        text["properties"]["top_k"]["default"] == 10 and text["properties"]["context_chars"]["default"] == 400
    )
    assert by_name["search_semantic"]["parameters"]["properties"]["context_chars"]["default"] == 500
    assert by_name["get_document_metadata"]["parameters"]["required"] == ["doc_id"]


def test_a_year_filter_reaches_the_sql_and_keeps_only_that_years_documents(tenant, contracts):
    tools = AgentTools(tenant=tenant)
    args = {"bucket": "contracts", "query": "termination notice", "filters": {"year": 2022}}
    with CaptureQueriesContext(connection) as queries:
        result = tools.run("search_text", args)
    assert result.error is None and result.evidence
    assert {item.passage.document_id for item in result.evidence} == {contracts[2022].pk}
    search_sql = [q["sql"] for q in queries.captured_queries if "rag_chunk" in q["sql"] and "@>" in q["sql"]]
    assert search_sql, "the year filter must be a WHERE on the metadata inside the search SQL"
    # The 2023 contract carries its year as a document date, not metadata: the same filter finds it.
    dated = tools.run("search_semantic", {**args, "filters": {"year": 2023}})
    assert {item.passage.document_id for item in dated.evidence} == {contracts[2023].pk}


def test_a_party_filter_keeps_the_documents_naming_that_party(tenant, contracts):
    result = AgentTools(tenant=tenant).run(
        "search_semantic", {"bucket": "all", "query": "termination", "filters": {"party": "Raviga"}}
    )
    assert {item.passage.document_id for item in result.evidence} == {contracts[2023].pk}
    nobody = AgentTools(tenant=tenant).run(
        "search_semantic", {"bucket": "all", "query": "termination", "filters": {"party": "Initrode"}}
    )
    assert nobody.evidence == [] and "Initrode" in nobody.note


def test_doc_id_scopes_a_search_to_one_document(tenant, contracts):
    result = AgentTools(tenant=tenant).run(
        "search_text", {"bucket": "all", "query": "terminate", "doc_id": doc_id_of(contracts[2023].pk)}
    )
    assert result.evidence and {e.passage.document_id for e in result.evidence} == {contracts[2023].pk}
    assert all(e.doc_id == f"doc_{contracts[2023].pk}" for e in result.evidence)


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("delete_everything", {}, "Unknown tool"),
        ("search_text", {"query": "x"}, "needs 'bucket'"),
        ("search_text", {"bucket": "all", "query": 5}, "'query' must be of type string"),
        ("search_text", {"bucket": "all", "query": "x", "limit": 3}, "Unknown argument"),
        ("search_text", {"bucket": "invoices", "query": "x"}, "Unknown bucket"),
        ("search_text", {"bucket": "all", "query": "x", "filters": {"doc_id": "abc"}}, "doc_42"),
        ("search_text", {"bucket": "all", "query": "x", "filters": {"year": "soon"}}, "Bad filters"),
        ("get_document_metadata", {"doc_id": "doc_999999999"}, "No document"),
    ],
)
def test_a_bad_call_comes_back_as_an_error_result(tenant, contracts, tool, args, message):
    result = AgentTools(tenant=tenant).run(tool, args)
    assert result.error and message in result.error and result.evidence == []


def test_document_metadata(tenant, contracts):
    metadata = AgentTools(tenant=tenant).run(
        "get_document_metadata", {"doc_id": doc_id_of(contracts[2022].pk)}
    )
    assert metadata.metadata["title"] == "Hooli Pied Piper Supply"
    assert metadata.metadata["metadata"] == {"year": 2022, "party": "Pied Piper"}
    assert metadata.metadata["doc_type"] == "contract" and metadata.metadata["case"]


def test_no_tool_returns_another_tenants_data(tenant, contracts, other_corpus):
    tools = AgentTools(tenant=tenant, reader=Reader(role=Role.ADMIN))
    foreign = {document.pk for document in other_corpus}
    for tool in ("search_text", "search_semantic"):
        for filters in (None, {"party": "Umbrella"}, {"doc_id": [doc_id_of(pk) for pk in foreign]}):
            result = tools.run(
                tool, {"bucket": "all", "query": "termination governing law rent", "filters": filters}
            )
            assert not {item.passage.document_id for item in result.evidence} & foreign
    for pk in foreign:
        result = tools.run("get_document_metadata", {"doc_id": doc_id_of(pk)})
        assert result.metadata is None and "No document" in result.error


# --- The request's scope ------------------------------------------------------------------------


@pytest.fixture
def pair(case, ingest_text):
    """The look-alike supply contracts, each in its own case."""
    return make_look_alikes("case_ids", case, ingest_text)


def test_a_tool_call_can_narrow_the_scope_but_never_widen_it(tenant, pair):
    tools = AgentTools(tenant=tenant, scope=SearchFilters(case_ids=(pair.inside.case_id,)))
    inside, outside = doc_id_of(pair.inside.pk), doc_id_of(pair.outside.pk)
    args = {"bucket": "all", "query": "terminate notice"}
    narrowed = tools.run("search_text", {**args, "doc_id": inside})
    assert {item.passage.document_id for item in narrowed.evidence} == {pair.inside.pk}
    for call in (
        {**args, "doc_id": outside},  # a document outside the scope
        {**args, "bucket": OUTSIDE_CASE},  # a case outside it
        {**args, "filters": {"case": OUTSIDE_CASE}},
    ):
        result = tools.run("search_semantic", call)
        assert result.error is None and result.evidence == [] and result.note == OUTSIDE_SCOPE, call
    unfiltered = tools.run("search_semantic", args)
    assert {item.passage.document_id for item in unfiltered.evidence} == {pair.inside.pk}
    # Its parties are named by no document in scope: nothing to search.
    party = tools.run("search_semantic", {**args, "filters": {"party": "Raviga"}})
    assert party.evidence == [] and "Raviga" in party.note


def test_a_document_outside_the_scope_is_not_found_to_the_agent(tenant, pair):
    tools = AgentTools(tenant=tenant, scope=SearchFilters(document_ids=(pair.inside.pk,)))
    found = tools.run("get_document_metadata", {"doc_id": doc_id_of(pair.inside.pk)})
    assert found.metadata["title"] == INSIDE_TITLE
    hidden = tools.run("get_document_metadata", {"doc_id": doc_id_of(pair.outside.pk)})
    assert hidden.metadata is None and "No document" in hidden.error


def test_the_planner_only_learns_of_cases_and_documents_in_scope(tenant, pair):
    scope = SearchFilters(case_ids=(pair.inside.case_id,), doc_types=("other", "memo"))
    assert bucket_names(AgentScope.of(tenant, scope)) == ["all", "memo", "other", pair.inside.case.name]
    assert OUTSIDE_CASE in bucket_names(AgentScope.of(tenant, None))
    question = f"In the {OUTSIDE_TITLE} of the {OUTSIDE_CASE}, what is the notice?"
    unscoped = RulePlanner(tenant=tenant, index_version=1).decompose(question)
    assert doc_id_of(pair.outside.pk) in json.dumps(unscoped.as_dict())
    assert OUTSIDE_CASE in unscoped.primary_buckets
    scoped = RulePlanner(tenant=tenant, index_version=1, scope=scope).decompose(question)
    assert doc_id_of(pair.outside.pk) not in json.dumps(scoped.as_dict())
    assert OUTSIDE_CASE not in scoped.primary_buckets


# --- The step in words (the staff UI's agent trace) ---------------------------------------------


def test_each_step_reads_as_a_sentence_naming_what_was_searched(tenant, contracts, other_corpus):
    tools = AgentTools(tenant=tenant)
    one = tools.run(
        "search_text", {"bucket": "all", "query": "terminate", "doc_id": doc_id_of(contracts[2023].pk)}
    )
    count = len(one.evidence)
    assert one.as_dict()["summary"] == (
        f"Searched “{contracts[2023].title}” for “terminate” (keywords): "
        f"{count} passage{'' if count == 1 else 's'}."
    )
    bucket = tools.run("search_semantic", {"bucket": "contract", "query": "governing law"})
    assert bucket.summary.startswith(
        "Searched the contract documents for “governing law” (meaning and keywords)"
    )
    metadata = tools.run("get_document_metadata", {"doc_id": doc_id_of(contracts[2022].pk)})
    assert metadata.summary == "Read the details of “Hooli Pied Piper Supply”."
    refused = tools.run("search_text", {"bucket": "invoices", "query": "x"})
    assert refused.summary.startswith("A search_text call was refused: Unknown bucket")
    # Another firm's document named by id is never described by its title.
    foreign = other_corpus[0]
    probe = tools.run("search_text", {"bucket": "all", "query": "x", "doc_id": doc_id_of(foreign.pk)})
    assert foreign.title not in probe.summary
