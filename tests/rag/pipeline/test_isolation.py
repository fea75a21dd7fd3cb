"""Tenant isolation through the whole pipeline: look-alike documents of another tenant are never
retrieved, cited or mentioned; another tenant's template is unknown; another tenant's or user's
conversation history is never used."""

import json

import pytest

from rag import services as rag_services
from rag.models import AuditLog
from rag.pipeline.run import run_query
from ragsite.exceptions import NotFound
from templates_admin import services as template_services
from tests.factories import MembershipFactory

from .conftest import LEASE, LEASE_TITLE, MSA, MSA_TITLE

# Tenant B's copy of the same agreement: same title and parties, different law and a marker.
MSA_B = MSA.replace("State of Delaware", "State of Nevada").replace(
    "five years", "seven years (Globex-B reference GLX-0042)"
)
QUESTIONS = [
    "Which state's law governs the Acme Globex Master Services agreement?",
    "How long do the confidentiality obligations survive termination?",
    "Is there a confidentiality clause?",
    "What rent does the tenant pay under the Initech lease?",
]


@pytest.fixture
def look_alikes(other_case, ingest_text):
    return {
        "msa": ingest_text(other_case, MSA_B, filename="acme-globex-msa.txt", title=MSA_TITLE),
        "lease": ingest_text(
            other_case,
            LEASE.replace("$4,000", "$9,999"),
            filename="initech-umbrella-lease.txt",
            title=LEASE_TITLE,
        ),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("question", QUESTIONS)
def test_a_query_never_cites_or_mentions_another_tenants_documents(
    tenant, other_tenant, corpus, look_alikes, question
):
    theirs = {d.pk for d in look_alikes.values()}
    mine = {d.pk for d in corpus.values()}
    ctx = run_query(tenant=tenant, question=question, similarity_threshold=0.0)
    result = ctx.result
    provenance = result["provenance"]
    assert set(provenance["documents_retrieved"]) <= mine
    assert {c["document_id"] for c in result["citations"]} <= mine
    assert {c.hit.document_id for c in ctx.candidates.candidates} <= mine
    assert provenance["candidates"] <= 2  # one chunk per document: only the tenant's own two
    assert not {d.document_id for d in ctx.candidates.routing.documents} & theirs
    dump = json.dumps(result) + (ctx.prompt.user if ctx.prompt else "")
    for marker in ("Nevada", "GLX-0042", "seven years", "9,999"):
        assert marker not in dump, marker
    row = AuditLog.objects.get(request_id=ctx.request_id)
    assert row.tenant_id == tenant.pk and set(row.documents_retrieved) <= mine


@pytest.mark.django_db
def test_the_other_tenant_gets_its_own_documents(tenant, other_tenant, corpus, look_alikes):
    """The control: the same question finds tenant B's version for tenant B."""
    question = "What is the governing law of the agreement?"
    mine = run_query(tenant=tenant, question=question).result
    theirs = run_query(tenant=other_tenant, question=question).result
    assert "Delaware" in mine["answer"] and "Nevada" not in mine["answer"]
    assert "Nevada" in theirs["answer"] and "Delaware" not in theirs["answer"]
    assert {c["document_id"] for c in theirs["citations"]} == {look_alikes["msa"].pk}


@pytest.mark.django_db
def test_a_template_of_another_tenant_is_not_found(tenant, other_tenant, corpus):
    template_services.template_create(
        tenant=other_tenant,
        data={
            "template_id": "globex_special",
            "name": "Globex special",
            "response_style": "terse",
            "system_prompt": "GLOBEX SECRET PROMPT",
            "user_prompt": "{context}\n{question}",
            "citation_style": "inline_numbers",
        },
    )
    assert run_query(
        tenant=other_tenant, question="Is there a confidentiality clause?", template_id="globex_special"
    )
    for options in ({}, {"dry_run": True}):
        with pytest.raises(NotFound):
            run_query(
                tenant=tenant, question="Is there a confidentiality clause?", template_id="globex_special",
                request_id="req_foreign_template", **options,
            )  # fmt: skip
    rows = AuditLog.objects.filter(request_id="req_foreign_template")
    assert [(r.tenant_id, r.status, r.error_type) for r in rows] == [(tenant.pk, "failed", "NotFound")] * 2


FIRST_TURN = f"In the {MSA_TITLE} agreement, is there a confidentiality clause?"
FOLLOW_UP = "Does it survive termination?"


@pytest.mark.django_db
def test_another_tenants_conversation_is_not_used(tenant, other_tenant, corpus, look_alikes):
    theirs = MembershipFactory(tenant=other_tenant).user
    mine = MembershipFactory(tenant=tenant).user
    run_query(tenant=other_tenant, question=FIRST_TURN, conversation_id="conv-1", user_id=theirs.pk)
    ctx = run_query(tenant=tenant, question=FOLLOW_UP, conversation_id="conv-1", user_id=mine.pk)
    assert ctx.result["provenance"]["search_query"] == FOLLOW_UP
    assert ctx.conversation == []
    # Not even with the same user id (a user who belongs to both firms).
    both = MembershipFactory(tenant=other_tenant).user
    MembershipFactory(tenant=tenant, user=both)
    run_query(tenant=other_tenant, question=FIRST_TURN, conversation_id="conv-2", user_id=both.pk)
    ctx = run_query(tenant=tenant, question=FOLLOW_UP, conversation_id="conv-2", user_id=both.pk)
    assert ctx.result["provenance"]["search_query"] == FOLLOW_UP


@pytest.mark.django_db
def test_another_users_conversation_is_not_used(tenant, corpus):
    alice = MembershipFactory(tenant=tenant).user
    bob = MembershipFactory(tenant=tenant).user
    run_query(tenant=tenant, question=FIRST_TURN, conversation_id="conv-1", user_id=alice.pk)
    ctx = run_query(tenant=tenant, question=FOLLOW_UP, conversation_id="conv-1", user_id=bob.pk)
    assert ctx.result["provenance"]["search_query"] == FOLLOW_UP
    assert ctx.stage_metadata["enhance"]["earlier_turns"] == 0
    # Alice's own follow-up does use it (the control).
    ctx = run_query(tenant=tenant, question=FOLLOW_UP, conversation_id="conv-1", user_id=alice.pk)
    assert ctx.result["provenance"]["search_query"].startswith(f"In the {MSA_TITLE} agreement")


@pytest.mark.django_db
def test_the_pipelines_selectors_see_only_their_tenant(tenant, other_tenant, corpus, look_alikes):
    from rag import selectors

    ours = set(selectors.document_ids_named(tenant=tenant, name="acme-globex-msa.txt"))
    assert ours == {corpus["msa"].pk}  # not the other tenant's file of the same name
    assert set(selectors.document_ids_named(tenant=tenant, name=MSA_TITLE)) == {corpus["msa"].pk}
    run_query(tenant=other_tenant, question=QUESTIONS[0], request_id="req_other")
    assert not selectors.audit_list(tenant=tenant).filter(request_id="req_other").exists()
    assert selectors.audit_list(tenant=other_tenant).filter(request_id="req_other").count() == 1
    snapshot = selectors.query_snapshot_get(tenant=tenant, template_id="legal_analysis_balanced")
    version, weights = snapshot.index_version, snapshot.weights_version
    other_version = selectors.query_snapshot_get(tenant=other_tenant, template_id="x").index_version
    assert version == selectors.index_version_get(tenant=tenant) != 0
    assert other_version == selectors.index_version_get(tenant=other_tenant) != 0
    rag_services.ranking_weights_set(
        tenant=other_tenant, similarity_weight=1, recency_weight=0, trust_weight=0
    )
    assert selectors.query_snapshot_get(tenant=tenant, template_id="x").weights_version == weights == 0
    assert selectors.query_snapshot_get(tenant=other_tenant, template_id="x").weights_version == 1


@pytest.mark.django_db
def test_filter_ids_unknown_sees_another_tenants_ids_as_missing(tenant, other_tenant, corpus, look_alikes):
    from rag import selectors
    from rag.retrieval.filters import SearchFilters

    theirs = look_alikes["msa"]
    mine = corpus["msa"]
    asked = SearchFilters(case_ids=(mine.case_id, theirs.case_id), document_ids=(mine.pk, theirs.pk, 2**40))
    assert selectors.filter_ids_unknown(tenant=tenant, filters=asked) == {
        "case_ids": [theirs.case_id],
        "document_ids": [theirs.pk, 2**40],
    }
    assert selectors.filter_ids_unknown(tenant=other_tenant, filters=asked) == {
        "case_ids": [mine.case_id],
        "document_ids": [mine.pk, 2**40],
    }
    assert selectors.filter_ids_unknown(tenant=tenant, filters=SearchFilters(document_ids=(mine.pk,))) == {}
