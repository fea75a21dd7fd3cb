"""Agentic mode end to end: decomposition to filters, the loop's budgets, clarification on no
results and on overload, invented citations stripped, the API's `mode: agentic` and isolation."""

import pytest

from rag.agent.loop import run_agent
from rag.agent.planner import RulePlanner, filters_from
from rag.agent.schema import Constraint
from rag.agent.tools import AgentTools, doc_id_of
from rag.models import AuditLog
from rag.pipeline.run import run_query
from tenants.models import Role

pytestmark = pytest.mark.django_db


def agentic(tenant, question, **options):
    return run_query(tenant=tenant, question=question, agentic=True, use_cache=False, **options).result


def test_the_named_contract_and_the_year_become_filters(tenant, corpus, contracts):
    planner = RulePlanner(tenant=tenant, index_version=1)
    lease = planner.decompose(f"In the {corpus['lease'].title}, what happens if rent is unpaid?")
    assert Constraint("doc_id", "in", [doc_id_of(corpus["lease"].pk)]) in lease.constraints
    supply = planner.decompose("Which contracts from 2023 with Raviga can be terminated on short notice?")
    assert supply.intent == "list" and supply.primary_buckets == ["contract"]
    assert Constraint("year", "=", 2023) in supply.constraints
    assert Constraint("party", "=", "Raviga") in supply.constraints
    filters = filters_from(supply.constraints)
    assert filters["year"] == 2023 and filters["party"] == "Raviga"
    assert filters_from([Constraint("year", ">=", 2020), Constraint("year", "<", 2024)]) == {
        "date_from": "2020-01-01",
        "date_to": "2023-12-31",
    }
    quoted = planner.plan(
        'Where is "ninety (90) days" mentioned?', planner.decompose('Where is "ninety (90) days" mentioned?')
    )
    assert quoted.strategy == "keyword" and quoted.initial_queries[0] == "ninety (90) days"


def test_an_agentic_answer_cites_doc_ids_resolved_to_title_and_page(tenant, corpus, contracts):
    question = "What notice does the Hooli Raviga supply contract of 2023 require for termination?"
    result = agentic(tenant, question)
    # The model cites [doc_42] (the agentic spec's compose); the reader gets [1], [2] in order.
    assert result["answer"] and "[doc_" not in result["answer"] and result["answer"].count("[1]") >= 1
    assert [c["citation_id"] for c in result["citations"]] == [
        str(n) for n in range(1, len(result["citations"]) + 1)
    ]
    # An integration asking for document ids keeps them.
    ids = agentic(tenant, question, citation_style="bracketed_ids")
    assert f"[doc_{contracts[2023].pk}]" in ids["answer"]
    cited = result["citations"][0]
    assert cited["doc_id"] == f"doc_{contracts[2023].pk}" and cited["title"] == "Hooli Raviga Supply"
    assert cited["page"] == 1 and "ten (10) days" in cited["snippet"]
    agent = result["agent"]
    calls = [step["result"] for step in agent["steps"] if "result" in step]
    assert calls and all(call["args"]["filters"]["year"] == 2023 for call in calls)  # the filter bridge
    assert agent["stopped"] == "enough" and agent["plan"]["strategy"] == "hybrid"
    assert result["clarification"] is None
    assert AuditLog.objects.get(request_id=result["request_id"]).status == "answered"


def test_no_results_within_the_restrictions_asks_instead_of_dropping_them(tenant, corpus, contracts):
    result = agentic(tenant, "What rent is due under the leases of 2019?")
    assert result["answer"] is None and result["citations"] == []
    clarification = result["clarification"]
    assert clarification["type"] == "no_results"
    assert "year 2019" in result["message"] and LEASE_TITLE_QUOTED in result["message"]
    assert clarification["tried"] and clarification["counts"]["documents_without_restrictions"] >= 1
    # The documents outside the restriction were only looked at, never used for an answer.
    assert result["agent"]["stopped"] == "clarify"


LEASE_TITLE_QUOTED = "“Initech Umbrella Commercial Lease”"


def test_nothing_relevant_anywhere_is_a_no_results_clarification(tenant, corpus):
    result = agentic(tenant, "Which footballer scored the winning goal in the cup final?")
    assert result["answer"] is None and result["clarification"]["type"] == "no_results"
    assert "found nothing" in result["message"]


def test_a_list_question_matching_too_many_documents_asks_to_narrow_it(tenant, corpus, contracts, settings):
    settings.RAG_AGENT_OVERLOAD_DOCUMENTS = 3
    result = agentic(tenant, "List all agreements that can be terminated on notice")
    clarification = result["clarification"]
    assert clarification["type"] == "overload" and result["answer"] is None
    assert clarification["counts"]["documents"] >= 3 and "narrow" in result["message"]
    assert clarification["counts"]["by_doc_type"]
    # A list past reading offers the review table of each case its documents are in.
    assert "review table" in result["message"]
    tables = clarification["review_tables"]
    assert {table["case"] for table in tables} == set(clarification["counts"]["by_case"])
    assert all(table["url"] == f"/cases/{table['case_id']}/review/" for table in tables)


def test_invented_citations_are_stripped(tenant, contracts, fake_provider):
    real = f"doc_{contracts[2023].pk}"

    def reply(request):
        text = request.sources[0].text.split("\n\n")[-1]
        return {
            "answer": f'The contract says "{text}" [{real}]. It also allows assignment [doc_987654].',
            "citations": [],
            "confidence": 0.9,
        }

    fake_provider(reply)
    result = agentic(tenant, "How can the Hooli Raviga supply contract be terminated?")
    assert "doc_987654" in result["flags"]["invalid_citations"]
    assert "[doc_987654]" not in (result["answer"] or "")
    assert [c["doc_id"] for c in result["citations"]] == [real]


def test_max_tool_calls_is_respected(tenant, contracts, settings):
    settings.RAG_AGENT_MAX_TOOL_CALLS = 1
    result = agentic(tenant, "How can the Hooli Raviga supply contract be terminated?")
    assert result["agent"]["tool_calls"] == 1 and result["agent"]["stopped"] == "max_tool_calls"
    assert result["answer"]  # the one call's evidence still answers


def test_the_time_budget_is_respected(tenant, contracts):
    ticks = iter(range(0, 1000, 10))  # every clock reading is 10 s later
    run = run_agent(
        question="How can the supply contracts be terminated?",
        tools=AgentTools(tenant=tenant),
        planner=RulePlanner(tenant=tenant, index_version=1),
        max_tool_calls=10,
        time_budget=25,
        evidence_limit=10,
        clock=lambda: next(ticks),
    )
    assert run.stopped == "time_budget" and run.tool_calls < 3


def test_the_api_answers_in_agentic_mode_and_never_shows_another_tenants_documents(
    tenant, corpus, other_corpus, make_key_client
):
    client = make_key_client(tenant, Role.VIEWER)
    response = client.post(
        "/api/v1/rag/query",
        {
            "query": "What is the notice period for termination of the master services agreement?",
            "mode": "agentic",
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    foreign = {document.pk for document in other_corpus}
    assert body["answer"] and body["agent"]["steps"], body
    seen = {c["document_id"] for c in body["citations"]}
    seen |= {
        int(hit["doc_id"][4:])
        for step in body["agent"]["steps"]
        for hit in step.get("result", {}).get("hits", [])
    }
    assert seen and not seen & foreign
    assert AuditLog.objects.filter(request_id=body["request_id"], tenant=tenant).exists()


def test_a_year_no_named_document_has_is_about_what_it_says_not_which_one(tenant, corpus, contracts):
    # "after 2030": neither Hooli contract is dated so late, so the year is about the contract's
    # terms (a renewal, a deadline), not a filter that would leave nothing to read.
    planner = RulePlanner(tenant=tenant, index_version=1)
    renewal = planner.decompose("Can the Hooli Raviga supply contract be renewed after 2030?")
    assert Constraint("doc_id", "in", [doc_id_of(contracts[2023].pk)]) in renewal.constraints
    assert not [c for c in renewal.constraints if c.field == "year"]
    result = agentic(tenant, "What notice does the Hooli Raviga supply contract require after 2030?")
    assert result["clarification"] is None and result["answer"]
    assert result["citations"][0]["doc_id"] == f"doc_{contracts[2023].pk}"
    # A year that picks one of the named contracts still filters.
    supply = planner.decompose("What notice does the Hooli supply contract of 2023 require?")
    assert Constraint("year", "=", 2023) in supply.constraints
    # The year is judged as the search applies it: a range reads the document's date, so the 2022
    # contract, dated only by its metadata "year", is not "after 2021" to the search either.
    undated = planner.decompose("Can the Hooli Pied Piper supply contract be renewed after 2021?")
    assert Constraint("doc_id", "in", [doc_id_of(contracts[2022].pk)]) in undated.constraints
    assert not [c for c in undated.constraints if c.field == "year"]
