"""Passages under the relevance thresholds that the cross-encoder reads as answering are kept.

A firm holding one short licence, stored as one passage: "Which state's laws govern?" is far from
it by cosine (0.20) and by keywords weighted within the firm (every word is in its only passage),
so the thresholds dropped it and the answer was "not found"; the packaged cross-encoder scores its
governing-law sentence 0.9. (A passage of a document other than the one a question names is not
admitted: tests/rag/pipeline/test_conversation.py, the lease asked after the MSA.)"""

import pytest

from rag.models import Case, Sensitivity
from rag.pipeline.run import run_query
from rag.retrieval.filters import SearchFilters
from rag.retrieval.service import Reader, retrieve
from tenants.models import Role

LICENSE = (
    "SOFTWARE LICENSE\n\nThis License is made between Quill Software and Pier Cafe.\n\n"
    "7. Governing Law. This License shall be governed by the laws of the State of Vermont.\n"
)
QUESTION = "Which state's laws govern?"


@pytest.fixture
def licence(case, ingest_text):
    return ingest_text(case, LICENSE, filename="quill-licence.txt")


def _retrieve(tenant, query, **options):
    return retrieve(tenant=tenant, query=query, reader=Reader(role=Role.OWNER), **options)


@pytest.mark.django_db
def test_the_cross_encoder_keeps_the_clause_the_thresholds_dropped(tenant, licence):
    found = _retrieve(tenant, QUESTION)
    assert [p.document_id for p in found.passages] == [licence.pk]
    # Without the model, the thresholds decide: nothing passes them.
    assert _retrieve(tenant, QUESTION, reranking_enabled=False).passages == []
    # A threshold the caller sets is final.
    assert _retrieve(tenant, QUESTION, similarity_threshold=0.3).passages == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "question",
    ["Is there a non-compete clause?", "What is the liability cap?", "What is the meaning of life?"],
)
def test_what_the_model_does_not_read_as_answering_stays_out(tenant, licence, question):
    assert _retrieve(tenant, question).passages == []


@pytest.mark.django_db
def test_the_answer_states_the_law_with_its_citation(tenant, licence):
    result = run_query(tenant=tenant, question=QUESTION).result
    assert result["answer"].startswith("The laws of Vermont govern [1]")
    assert [c["document_id"] for c in result["citations"]] == [licence.pk]
    assert "Vermont" in result["citations"][0]["snippet"]
    unrelated = run_query(tenant=tenant, question="Who won the 2010 World Cup?").result
    assert unrelated["citations"] == [] and unrelated["provenance"]["not_found_reason"] == "no_passages"


@pytest.mark.django_db
def test_what_the_model_may_admit_is_only_what_the_reader_may_read(
    tenant, case, other_case, ingest_text, member
):
    # The passages the model reads past the thresholds come from the same scoped search: a
    # confidential licence, another firm's or another case's licence is never among them.
    secret = ingest_text(case, LICENSE, filename="secret-licence.txt", sensitivity=Sensitivity.CONFIDENTIAL)
    ingest_text(other_case, LICENSE.replace("Vermont", "Maine"), filename="foreign-licence.txt")
    outsider = retrieve(tenant=tenant, query=QUESTION, reader=Reader(user_id=member.pk, role=Role.MEMBER))
    assert outsider.passages == []
    assert [p.document_id for p in _retrieve(tenant, QUESTION).passages] == [secret.pk]  # the owner reads it
    elsewhere = Case.objects.create(tenant=tenant, name="Another matter")
    scoped = _retrieve(tenant, QUESTION, filters=SearchFilters(case_ids=(elsewhere.pk,)))
    assert scoped.passages == []
