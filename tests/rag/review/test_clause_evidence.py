"""A yes/no question whose clause the review finds quotes the review's evidence too: a clause stated
in two places is cited in both, search's quote first; the evidence never reaches a reader who may
not read the document, and a document without the clause gets none."""

from __future__ import annotations

import pytest

from rag import services as rag_services
from rag.models import ClauseSignal, Document
from rag.pipeline.run import run_query, stream_query
from rag.retrieval.service import Reader
from rag.review import signals
from rag.review.model import SURE, clause_model
from tests.rag.review.contracts import ingest, make_confidential
from tests.rag.review.test_doubted import set_probability
from tests.rag.review.test_matter_lists import BOILERPLATE

NON_COMPETE = (
    "9. Non-Competition. During the Term, Distributor shall not, directly or indirectly, manufacture, "
    "sell, distribute or promote any products that compete with the Products anywhere in the Territory."
)
AFTER_TERM = (
    "15. Post-Termination Covenant. For a period of two (2) years after the expiration or termination of "
    "this Agreement, Distributor shall not, directly or indirectly, sell or promote competing products in "
    "the Territory or solicit any customer of Alpha for such products."
)
CONTRACT = (
    "DISTRIBUTION AGREEMENT between Alpha Foods Inc and Northwind LLC.\n\n"
    f"{NON_COMPETE}\n\n{BOILERPLATE}\n\n"
    "10. Warranties. Alpha warrants that the Products conform to their specifications on delivery.\n\n"
    "11. Force Majeure. Neither party is liable for a delay caused by events beyond its control.\n\n"
    f"{AFTER_TERM}"
)
QUESTION = "Does this agreement contain a non-compete?"


@pytest.fixture
def alpha(tenant):
    case = rag_services.case_create(tenant=tenant, name="Northwind diligence")
    return ingest(tenant, case, "Alpha Distribution Agreement", CONTRACT)


@pytest.mark.django_db
def test_the_signal_keeps_the_next_best_paragraphs_of_the_clause(alpha):
    signals.compute(alpha)
    row = ClauseSignal.objects.get(document=alpha, column="non_compete")
    text = Document.objects.get(pk=alpha.pk).text
    places = [text[row.char_start : row.char_end], *(text[s:e] for _, s, e, _ in row.more)]
    assert {NON_COMPETE, AFTER_TERM} <= set(places)
    model = clause_model()
    assert all(model.probability(score) < model.probability(row.score) + 1e-9 for *_, score in row.more)


@pytest.mark.django_db
def test_a_clause_stated_in_two_places_is_cited_in_both(tenant, alpha):
    # Search is asked for one passage: the review's evidence brings the clause's other place.
    result = run_query(
        tenant=tenant, question=QUESTION, filters={"document_ids": [alpha.pk]}, top_k=1, use_cache=False
    ).result
    assert result["answer"].startswith("Yes. Alpha Distribution Agreement states:")
    snippets = [c["snippet"] for c in result["citations"]]
    assert any("manufacture, sell, distribute or promote" in s for s in snippets)
    assert any("after the expiration or termination" in s for s in snippets)
    assert "Also on point:" in result["answer"]
    assert result["provenance"]["stages"]["clause_evidence"]["added"] >= 1


@pytest.mark.django_db
def test_a_confidential_documents_evidence_never_reaches_a_reader_who_may_not_read_it(tenant, alpha):
    make_confidential(alpha)
    result = run_query(
        tenant=tenant,
        question=QUESTION,
        filters={"document_ids": [alpha.pk]},
        reader=Reader(),
        use_cache=False,
    ).result
    assert not result["citations"]
    assert "compete" not in str(result["answer"]) and "clause_evidence" not in result["provenance"]["stages"]


@pytest.mark.django_db
def test_the_evidence_is_quoted_streamed_and_in_agentic_mode_too(tenant, alpha):
    filters = {"document_ids": [alpha.pk]}
    ctx, events = stream_query(tenant=tenant, question=QUESTION, filters=filters, top_k=1, use_cache=False)
    for _ in events:
        pass
    agentic = run_query(tenant=tenant, question=QUESTION, filters=filters, agentic=True, use_cache=False)
    for result in (ctx.result, agentic.result):
        assert result["answer"].startswith("Yes."), result["answer"]
        snippets = " ".join(c["snippet"] for c in result["citations"])
        assert "manufacture, sell, distribute or promote" in snippets
        assert "after the expiration or termination" in snippets


@pytest.mark.django_db
def test_where_search_finds_no_answer_a_sure_review_answers_yes_from_its_evidence(tenant, alpha, settings):
    settings.RAG_MIN_ANSWERABILITY = 1.01  # search's passages never answer here
    filters = {"document_ids": [alpha.pk]}
    set_probability(alpha, "non_compete", 0.9)
    result = run_query(tenant=tenant, question=QUESTION, filters=filters, use_cache=False).result
    assert (result["answer"] or "").startswith("Yes. Alpha Distribution Agreement states:"), result
    assert "manufacture, sell, distribute or promote" in result["answer"]
    assert result["provenance"]["stages"]["build_context"]["answered_from"] == "clause_evidence"
    assert result["confidence_score"] == 0.9  # the review's, not search's
    # Less sure (between the threshold and SURE): "not found", as search alone says.
    set_probability(alpha, "non_compete", (clause_model().threshold + SURE) / 2)
    result = run_query(tenant=tenant, question=QUESTION, filters=filters, use_cache=False).result
    assert result["answer"] is None and "answered_from" not in result["provenance"]["stages"]["build_context"]


@pytest.mark.django_db
def test_a_sure_review_outranks_the_word_lists_never_uses_the_words(tenant):
    # "a first negotiating period": the review's evidence words read it, the answerability word
    # lists do not (they would say the document never uses a first-refusal clause's words). The
    # review read the paragraph and is sure: "Yes." and the paragraph.
    clause = (
        "12. Sequels. Licensee shall have a first negotiating period of thirty (30) days for any sequel "
        "before Licensor may offer the rights in it to any third party."
    )
    case = rag_services.case_create(tenant=tenant, name="Sequel matter")
    text = f"LICENSE AGREEMENT between Omega Films Inc and Northwind LLC.\n\n{BOILERPLATE}\n\n{clause}"
    omega = ingest(tenant, case, "Omega License Agreement", text)
    set_probability(omega, "rofr_rofo_rofn", 0.9)
    question = "Is there a right of first refusal?"
    result = run_query(
        tenant=tenant, question=question, filters={"document_ids": [omega.pk]}, use_cache=False
    )
    stages = result.result["provenance"]["stages"]["build_context"]
    assert stages.get("missing_clause") == "right of first refusal"  # the word lists' verdict
    assert (result.result["answer"] or "").startswith("Yes."), result.result["message"]
    assert "first negotiating period" in result.result["answer"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("question", "filtered"),
    [
        ("What does the non-compete prohibit?", True),  # of the chosen document
        ("What does the non-compete of the Alpha distribution agreement prohibit?", False),  # named
    ],
)
def test_a_question_about_what_a_clause_says_quotes_the_reviews_evidence_too(
    tenant, alpha, question, filtered
):
    # What a clause says is search's to answer (no "Yes."); the review's reading of the clause is
    # quoted after it, so a clause stated in two places is cited in both.
    filters = {"document_ids": [alpha.pk]} if filtered else {"case_ids": [alpha.case_id]}
    result = run_query(tenant=tenant, question=question, filters=filters, top_k=1, use_cache=False).result
    assert not result["answer"].startswith(("Yes.", "No", "Probably not")), result["answer"]
    snippets = [c["snippet"] for c in result["citations"]]
    assert any("manufacture, sell, distribute or promote" in s for s in snippets)
    assert any("after the expiration or termination" in s for s in snippets)
    assert {c["document_id"] for c in result["citations"]} == {alpha.pk}


@pytest.mark.django_db
def test_a_question_asking_a_value_gets_no_evidence(tenant, alpha):
    # "How long …?" is answered with the duration the quote states; the clause's other places
    # would read as more answers.
    result = run_query(
        tenant=tenant,
        question="How long does the non-compete last after termination?",
        filters={"document_ids": [alpha.pk]},
        use_cache=False,
    ).result
    assert "clause_evidence" not in result["provenance"]["stages"] or not result["provenance"]["stages"][
        "clause_evidence"
    ].get("added")
