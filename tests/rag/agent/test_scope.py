"""A request's scope is absolute in agentic mode: its filters bound every tool call, every probe of
the planner and the evidence that reaches the answer, for each kind of filter; a clarification
names only documents in scope; the ask page's "Ask about this case" stays in the case."""

import dataclasses
import json
import re

import pytest
from django.test import Client

from rag import services
from rag.agent.tools import doc_id_of
from rag.pipeline.run import run_query
from rag.retrieval.filters import SearchFilters
from tenants.models import Role
from tests.factories import MembershipFactory
from tests.rag.pipeline.conftest import (
    LEASE,
    LEASE_TITLE,
    OUTSIDE_CASE,
    OUTSIDE_TITLE,
    SCOPE_KINDS,
    make_look_alikes,
)

pytestmark = pytest.mark.django_db

# Names the contract outside the scope: without the scope, that contract answers.
QUESTION = "In the supply agreement between Hooli and Raviga, on what notice may either party terminate?"


def agentic(tenant, question, **options):
    return run_query(tenant=tenant, question=question, agentic=True, use_cache=False, **options).result


def documents_shown(result) -> set[int]:
    """Every document the response shows: cited, in the evidence, or anywhere in the agent's trace
    (constraints, tool arguments, hits, metadata), by id."""
    text = json.dumps(result, default=str)
    return {int(pk) for pk in re.findall(r"\bdoc_(\d+)", text)} | {
        citation["document_id"] for citation in result["citations"]
    }


def test_there_is_a_look_alike_test_for_every_kind_of_filter():
    # `visibility` is the reader's, never a request's: agentic mode is probed against it in
    # tests/security/test_ethical_walls.py and tests/rag/pipeline/test_security.py.
    fields = {field.name for field in dataclasses.fields(SearchFilters)} - {"visibility"}
    assert set(SCOPE_KINDS) == fields


def test_without_a_scope_the_look_alike_named_in_the_question_answers(tenant, case, ingest_text):
    """The control: what the scope tests below keep out would otherwise be the answer."""
    pair = make_look_alikes("document_ids", case, ingest_text)
    result = agentic(tenant, QUESTION)
    assert {citation["document_id"] for citation in result["citations"]} == {pair.outside.pk}


def test_an_agentic_answer_keeps_to_each_kind_of_filter(tenant, look_alikes):
    result = agentic(tenant, QUESTION, filters=look_alikes.filters)
    assert result["answer"] and "sixty (60) days" in result["answer"], result["message"]
    assert {citation["document_id"] for citation in result["citations"]} == {look_alikes.inside.pk}
    assert {item["doc_id"] for item in result["agent"]["evidence"]} == {doc_id_of(look_alikes.inside.pk)}
    assert documents_shown(result) == {look_alikes.inside.pk}
    assert OUTSIDE_TITLE not in json.dumps(result)


def test_a_no_results_clarification_names_only_documents_in_scope(tenant, case, corpus, ingest_text):
    other = services.case_create(tenant=tenant, name=OUTSIDE_CASE)
    outside = ingest_text(other, LEASE, filename="raviga-lease.txt", title="Raviga Hooli Commercial Lease")
    result = agentic(tenant, "What rent is due under the leases of 2019?", filters={"case_ids": [case.pk]})
    clarification = result["clarification"]
    assert clarification["type"] == "no_results" and result["answer"] is None
    # Without the question's year, the lease in the case matches; the one outside the case is never named.
    assert f"“{LEASE_TITLE}”" in result["message"] and outside.title not in result["message"]
    assert outside.pk not in documents_shown(result)


def test_an_overload_clarification_counts_only_documents_in_scope(
    tenant, case, corpus, ingest_text, settings
):
    settings.RAG_AGENT_OVERLOAD_DOCUMENTS = 2
    other = services.case_create(tenant=tenant, name=OUTSIDE_CASE)
    for number in range(3):
        text = f"{LEASE}\n\nSchedule {number}."
        ingest_text(other, text, filename=f"lease-{number}.txt", title=f"Raviga Lease {number}")
    result = agentic(
        tenant, "List all agreements that can be terminated on notice", filters={"case_ids": [case.pk]}
    )
    clarification = result["clarification"]
    assert clarification["type"] == "overload", result
    assert clarification["counts"]["by_case"] == {case.name: 2} and clarification["counts"]["documents"] == 2


# --- The staff UI ---------------------------------------------------------------------------------


def test_ask_about_this_case_stays_in_the_case_in_agentic_mode(tenant, case, ingest_text):
    pair = make_look_alikes("case_ids", case, ingest_text)
    browser = Client()
    browser.force_login(MembershipFactory(tenant=tenant, role=Role.MEMBER).user)
    case_page = browser.get(f"/cases/{case.pk}/").content.decode()
    link = re.search(r'href="([^"]+)">Ask about this case<', case_page)[1].replace("&amp;", "&")
    ask_page = browser.get(link).content.decode()
    assert 'name="agentic"' in ask_page
    selected = re.search(r'<option value="(\d+)" selected>', ask_page)[1]
    # What static/js/ask.js sends for the form as the link fills it, with "Agentic search" ticked.
    body = {"query": QUESTION, "filters": {"case_ids": [int(selected)]}, "mode": "agentic"}
    response = browser.post("/api/v1/rag/query", body, content_type="application/json")
    assert response.status_code == 200, response.content
    result = response.json()
    assert result["answer"] and result["agent"]["steps"]
    assert documents_shown(result) == {pair.inside.pk}
