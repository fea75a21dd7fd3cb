"""Conversations: a follow-up is searched with what the user's earlier turns established."""

import pytest

from rag.models import AuditLog
from rag.pipeline.run import run_query

from .conftest import MSA_TITLE

FIRST = f"In the {MSA_TITLE} agreement, is there a confidentiality clause?"
FOLLOW_UP = "Does it survive termination?"
REWRITTEN = f"In the {MSA_TITLE} agreement, does it survive termination (regarding confidentiality)?"


@pytest.mark.django_db
def test_a_follow_up_is_searched_with_the_document_and_clause_of_the_earlier_turn(tenant, corpus, member):
    first = run_query(tenant=tenant, question=FIRST, conversation_id="conv-1", user_id=member.pk)
    assert first.result["provenance"]["search_query"] == FIRST
    assert first.result["provenance"]["routed_reference"]  # the first turn names its document

    ctx = run_query(tenant=tenant, question=FOLLOW_UP, conversation_id="conv-1", user_id=member.pk)
    result = ctx.result
    assert result["provenance"]["search_query"] == REWRITTEN
    assert ctx.conversation == [FIRST]
    # The rewritten question is routed to that agreement, and the answer cites it.
    assert result["provenance"]["routed_reference"] == f"the {MSA_TITLE} agreement"
    assert result["provenance"]["documents_retrieved"][0] == corpus["msa"].pk
    assert [c["document_id"] for c in result["citations"]] == [corpus["msa"].pk]
    row = AuditLog.objects.get(request_id=ctx.request_id)
    assert (row.query, row.search_query, row.conversation_id) == (FOLLOW_UP, REWRITTEN, "conv-1")


@pytest.mark.django_db
def test_without_the_conversation_the_follow_up_is_searched_as_asked(tenant, corpus, member):
    run_query(tenant=tenant, question=FIRST, conversation_id="conv-1", user_id=member.pk)
    for options in ({}, {"conversation_id": "conv-2"}):
        ctx = run_query(tenant=tenant, question=FOLLOW_UP, user_id=member.pk, **options)
        assert ctx.result["provenance"]["search_query"] == FOLLOW_UP


@pytest.mark.django_db
def test_a_third_turn_builds_on_the_rewritten_second(tenant, corpus, member):
    for question in (FIRST, FOLLOW_UP):
        run_query(tenant=tenant, question=question, conversation_id="conv-1", user_id=member.pk)
    ctx = run_query(tenant=tenant, question="Is it mutual?", conversation_id="conv-1", user_id=member.pk)
    assert ctx.conversation == [FIRST, REWRITTEN]
    assert ctx.result["provenance"]["search_query"] == (
        f"In the {MSA_TITLE} agreement, is it mutual (regarding confidentiality)?"
    )


@pytest.mark.django_db
def test_only_the_last_turns_count(tenant, corpus, member):
    run_query(tenant=tenant, question=FIRST, conversation_id="conv-1", user_id=member.pk)
    for question in ("What is the rent?", "When is it due?", "Who pays it?"):
        run_query(tenant=tenant, question=question, conversation_id="conv-1", user_id=member.pk)
    ctx = run_query(tenant=tenant, question=FOLLOW_UP, conversation_id="conv-1", user_id=member.pk)
    assert len(ctx.conversation) == 3 and FIRST not in ctx.conversation


@pytest.mark.django_db
def test_a_follow_up_naming_the_other_document_is_answered_from_it(tenant, corpus, member):
    """ "What about the Initech lease?" after a question about the MSA: the lease answers, and "it"
    in the next turn is the lease."""

    def ask(question):
        return run_query(tenant=tenant, question=question, conversation_id="conv-1", user_id=member.pk).result

    ask(f"In the {MSA_TITLE} agreement, which law governs?")
    second = ask("What about the Initech lease?")
    assert MSA_TITLE not in second["provenance"]["search_query"]
    assert {c["document_id"] for c in second["citations"]} == {corpus["lease"].pk}
    assert "New York" in second["answer"]
    third = ask("How much rent is due under it?")
    assert third["provenance"]["search_query"].startswith(f"In {corpus['lease'].title},")
    assert {c["document_id"] for c in third["citations"]} == {corpus["lease"].pk}
    assert "$4,000" in third["answer"]
