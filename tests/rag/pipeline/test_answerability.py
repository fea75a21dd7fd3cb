"""The answerability gate, end to end: a question whose clause the named contract lacks is "not
found" (`not_in_documents`) before any model is asked, even when another contract has that clause:
by the clause's own words missing from the contract (insurance) or by the cross-encoder (a question
no clause type names); an answerable one is answered from the right clause; a dry run reports the
answerability without halting."""

import json

import pytest
from django.conf import settings

from rag.models import AuditLog, Sensitivity
from rag.pipeline.answerability import CLAUSE_ANSWER_SCORE
from rag.pipeline.result import NOT_FOUND_MESSAGE
from rag.pipeline.run import run_query
from rag.retrieval.rerank import get_reranker
from ragsite.exceptions import NotFound
from tests.rag.sponsorships import (
    APACHE_INSURANCE,
    CANO,
    CANO_ASSIGNMENT,
    CANO_FEES,
    CANO_GOVERNING_LAW,
    CANO_NOTICES,
    CANO_TITLE,
    ingest_sponsorships,
)

UNANSWERABLE = "What insurance must Boyd carry under the Cano sponsorship?"
# No clause type names this: only the cross-encoder can tell the contract does not say.
UNANSWERABLE_BY_MODEL = "What colour must Boyd paint its trucks under the Cano sponsorship?"


@pytest.fixture
def contracts(case, ingest_text):
    return ingest_sponsorships(case, ingest_text)


def _window(passage) -> str:
    start, end = passage.answer_start - passage.char_start, passage.answer_end - passage.char_start
    return " ".join(passage.text[start:end].split())


@pytest.mark.django_db
def test_a_clause_the_named_contract_lacks_is_not_found(tenant, contracts, counted_extractive):
    ctx = run_query(tenant=tenant, question=UNANSWERABLE)
    result = ctx.result
    assert result["answer"] is None
    # The message says what is missing where: the contract never speaks of insurance.
    assert result["message"].startswith(f"No insurance clause found in \u201c{CANO_TITLE}\u201d")
    assert result["citations"] == [] and result["follow_up_questions"] == []
    assert result["confidence_score"] == 0.0
    assert result["provenance"]["not_found_reason"] == "not_in_documents"
    assert counted_extractive == []  # decided before the model is asked
    assert ctx.answerability == 0.0
    assert ctx.stage_metadata["build_context"]["answerability"] == ctx.answerability
    assert ctx.stage_metadata["build_context"]["answerable"] is False
    assert ctx.stage_metadata["build_context"]["missing_clause"] == "insurance"
    assert AuditLog.objects.get(request_id=ctx.request_id).status == "not_found"


@pytest.mark.django_db
def test_a_clause_the_named_contract_lacks_is_not_found_in_agentic_mode_too(tenant, contracts):
    # The agent's searches may bring the other contract's insurance clause; the named one has none.
    ctx = run_query(tenant=tenant, question=UNANSWERABLE, agentic=True)
    assert [d.document_id for d in ctx.retrieval.routing.documents] == [contracts["cano"].pk]
    assert ctx.result["answer"] is None
    assert ctx.result["provenance"]["not_found_reason"] == "not_in_documents"
    assert ctx.stage_metadata["build_context"]["missing_clause"] == "insurance"


@pytest.mark.django_db
def test_a_question_no_clause_type_names_is_not_found_by_the_model(tenant, contracts, counted_extractive):
    ctx = run_query(tenant=tenant, question=UNANSWERABLE_BY_MODEL)
    result = ctx.result
    assert result["answer"] is None and result["message"] == NOT_FOUND_MESSAGE
    assert result["provenance"]["not_found_reason"] == "not_in_documents"
    assert "missing_clause" not in ctx.stage_metadata["build_context"]
    assert 0 < ctx.answerability < settings.RAG_MIN_ANSWERABILITY
    assert counted_extractive == []


@pytest.mark.django_db
def test_the_clause_is_looked_for_in_the_one_document_in_scope(tenant, contracts):
    question = "What insurance must the racing team carry?"
    scoped = run_query(tenant=tenant, question=question, filters={"document_ids": [contracts["cano"].pk]})
    assert scoped.result["answer"] is None
    assert scoped.result["message"].endswith(
        "does not contain an insurance requirement. Every passage of it was checked."
    )
    other = run_query(tenant=tenant, question=question, filters={"document_ids": [contracts["apache"].pk]})
    assert "missing_clause" not in other.stage_metadata["build_context"]
    assert other.result["answer"] and APACHE_INSURANCE in other.result["answer"]
    assert other.result["citations"][0]["document_id"] == contracts["apache"].pk


@pytest.mark.django_db
def test_a_confidential_document_is_not_said_to_lack_a_clause(tenant, contracts):
    # "No insurance clause found in ..." would tell a reader who may not read it what it does not say.
    cano = contracts["cano"]
    cano.sensitivity = Sensitivity.CONFIDENTIAL
    cano.save(update_fields=["sensitivity"])
    ctx = run_query(tenant=tenant, question=UNANSWERABLE)
    assert "missing_clause" not in ctx.stage_metadata["build_context"]
    assert "insurance" not in (ctx.result["message"] or "")


@pytest.mark.django_db
def test_a_named_question_is_not_answered_from_another_contracts_clause(
    tenant, contracts, counted_extractive
):
    ctx = run_query(tenant=tenant, question=UNANSWERABLE)
    retrieval = ctx.retrieval
    assert [d.document_id for d in retrieval.routing.documents] == [contracts["cano"].pk]
    # The look-alike's insurance clause was retrieved, and it would answer the question as read
    # without the names: only the named contract's windows may count.
    apache = [p for p in retrieval.passages if p.document_id == contracts["apache"].pk]
    assert any(APACHE_INSURANCE in _window(p) for p in apache)
    elsewhere = get_reranker().score(retrieval.routing.content_question, [APACHE_INSURANCE])[0]
    assert elsewhere > 0.5 > settings.RAG_MIN_ANSWERABILITY
    assert ctx.result["answer"] is None
    assert ctx.result["provenance"]["not_found_reason"] == "not_in_documents"
    assert counted_extractive == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("question", "clause", "opening"),
    [
        # The governing-law question opens with the state (rag.answers), the permission question
        # naming its contract with the review's "No" (rag.pipeline.stages.review), then the quote.
        (
            "Which state's law governs the Cano sponsorship with Boyd?",
            CANO_GOVERNING_LAW,
            "The laws of Oklahoma govern [1]. ",
        ),
        (
            "May Boyd assign the Cano sponsorship without consent?",
            CANO_ASSIGNMENT,
            "No: the agreement has a restriction on assignment. ",
        ),
        ("How must notices under the Cano Boyd sponsorship be delivered?", CANO_NOTICES, ""),
    ],
)
def test_an_answerable_question_on_the_same_contract_cites_the_right_clause(
    tenant, contracts, question, clause, opening
):
    cano = contracts["cano"]
    ctx = run_query(tenant=tenant, question=question)
    result = ctx.result
    assert result["provenance"]["not_found_reason"] is None
    assert ctx.answerability >= settings.RAG_MIN_ANSWERABILITY
    assert ctx.stage_metadata["build_context"]["answerable"] is True
    assert result["answer"] and clause in result["answer"]
    assert result["answer"].startswith(f"{opening}{CANO_TITLE} states:"), result["answer"]
    first = result["citations"][0]
    assert first["document_id"] == cano.pk and first["snippet"] == clause
    assert cano.text[first["char_start"] : first["char_end"]] == clause
    assert f"[{first['citation_id']}]" in result["answer"]
    assert all(c["document_id"] == cano.pk for c in result["citations"])
    assert "Kansas" not in result["answer"] and "Lonestar" not in result["answer"]
    assert 0 < result["confidence_score"] <= 1


@pytest.mark.django_db
def test_a_named_question_is_answered_from_its_own_contract_only(tenant, contracts):
    cano = contracts["cano"]
    result = run_query(tenant=tenant, question="How much must Cano pay Boyd under the sponsorship?").result
    assert all(c["document_id"] == cano.pk for c in result["citations"])
    if result["answer"] is not None:
        assert CANO_FEES in result["answer"] and "Lonestar" not in result["answer"]


@pytest.mark.django_db
def test_a_dry_run_reports_the_answerability_without_halting(tenant, contracts, fake_provider):
    provider = fake_provider(error=AssertionError("a dry run must not call the model"))
    ctx = run_query(tenant=tenant, question=UNANSWERABLE, dry_run=True)
    metadata = ctx.stage_metadata["build_context"]
    assert metadata["answerable"] is False
    assert metadata["answerability"] == ctx.answerability < settings.RAG_MIN_ANSWERABILITY
    # Not halted at build_context: the prompt was built and shown, as for an answerable question.
    assert ctx.not_found_reason is None
    assert "build_prompt" in ctx.stage_metadata
    result = ctx.result
    assert result["dry_run"] is True and result["generated_prompt_detail"]["user"]
    assert UNANSWERABLE in result["generated_prompt_detail"]["user"]
    assert result["selected_snippets"]
    # The simulation says why: the insurance clause is missing from the named contract.
    assert result["would_answer"] is False and result["missing_clause"] == "insurance"
    assert provider.calls == 0
    assert AuditLog.objects.get(request_id=ctx.request_id).status == "dry_run"
    answerable = run_query(tenant=tenant, question="May Boyd assign the Cano sponsorship?", dry_run=True)
    assert answerable.result["would_answer"] is True and answerable.result["missing_clause"] is None


@pytest.mark.django_db
def test_a_short_question_about_a_chosen_document_is_answered(tenant, contracts, settings):
    # "What's the term?" is far by cosine and keywords from "This Agreement begins ... and continues
    # for two (2) racing seasons": the relevance thresholds would drop every passage. Asked about a
    # chosen document, they do not apply; the cross-encoder judges.
    cano = contracts["cano"]
    ctx = run_query(tenant=tenant, question="What's the term?", filters={"document_ids": [cano.pk]})
    assert ctx.stage_metadata["rank"]["thresholds"] == "not applied: the documents were chosen"
    result = ctx.result
    assert result["answer"] and "two (2) racing seasons" in result["answer"]
    assert result["citations"][0]["document_id"] == cano.pk
    # Without a cross-encoder there is no answerability gate: the thresholds keep their say.
    settings.RAG_RERANKER_MODEL = ""
    ctx = run_query(tenant=tenant, question="What's the term?", filters={"document_ids": [cano.pk]})
    assert "thresholds" not in ctx.stage_metadata["rank"]


@pytest.mark.django_db
def test_another_tenants_document_is_never_said_to_lack_a_clause(tenant, contracts, other_case, ingest_text):
    # Its id in the filter reads nothing of it: the request is refused as naming an unknown document
    # (issue #19: the same 404 as a missing id) before any stage runs, so no title, no clause judged.
    theirs = ingest_text(
        other_case, CANO.replace("Cano", "Vandelay"), filename="theirs.txt", title="Their Deal"
    )
    with pytest.raises(NotFound) as refused:
        run_query(tenant=tenant, question=UNANSWERABLE, filters={"document_ids": [theirs.pk]})
    assert "Their Deal" not in json.dumps(refused.value.details) + refused.value.message
    row = AuditLog.objects.get(query=UNANSWERABLE)
    assert (row.status, row.error_type, row.result) == ("failed", "NotFound", None)


@pytest.mark.django_db
def test_a_clause_asked_for_in_other_words_than_its_own_is_answered(tenant, contracts):
    # "walk away" is how people say "terminate": the question alone scores the termination clause
    # under the gate, but the reranker, reading the question with its clause type's wording, judges
    # the clause relevant, so the contract has what was asked.
    cano = contracts["cano"]
    ctx = run_query(tenant=tenant, question="How can a party walk away?", filters={"document_ids": [cano.pk]})
    lead = ctx.retrieval.passages[0]
    alone = get_reranker().score("How can a party walk away?", [_window(lead)])[0]
    assert alone < settings.RAG_MIN_ANSWERABILITY <= CLAUSE_ANSWER_SCORE <= lead.answer_score
    assert ctx.answerability == lead.answer_score
    result = ctx.result
    assert result["provenance"]["not_found_reason"] is None
    assert "Either party may terminate this Agreement" in result["answer"]
    assert result["citations"][0]["document_id"] == cano.pk


class _CountingReranker:
    """The real reranker, counting the (question, windows) calls made to it."""

    def __init__(self, real):
        self.real, self.name, self.questions = real, real.name, []

    def score(self, question, windows):
        self.questions.append(question)
        return self.real.score(question, windows)


@pytest.mark.django_db
def test_a_window_the_reranker_already_judged_an_answer_settles_it_without_another_model_run(
    tenant, contracts, monkeypatch
):
    from rag.pipeline import answerability as module

    counting = _CountingReranker(get_reranker())
    monkeypatch.setattr(module, "get_reranker", lambda: counting)
    # The governing-law clause scores far above 0.5 for the worded question: that settles it.
    ctx = run_query(tenant=tenant, question="Which state's law governs the Cano sponsorship with Boyd?")
    best = max(p.answer_score for p in ctx.retrieval.passages[: module.ANSWER_WINDOWS])
    assert best >= CLAUSE_ANSWER_SCORE and ctx.answerability == best
    assert counting.questions == []
    assert CANO_GOVERNING_LAW in ctx.result["answer"]
    # No window reaches 0.5 for a question the Cano contract cannot answer: the question alone is
    # scored, and refused.
    ctx = run_query(tenant=tenant, question=UNANSWERABLE_BY_MODEL)
    assert max(p.answer_score or 0.0 for p in ctx.retrieval.passages) < CLAUSE_ANSWER_SCORE
    assert len(counting.questions) == 1 and "paint" in counting.questions[0]
    assert ctx.answerability < settings.RAG_MIN_ANSWERABILITY
    assert ctx.result["answer"] is None
