"""A question about one document whose clause the review did not find, but not surely enough to say
"No", says so before it quotes anything: "Probably not: a non-compete clause was not found in …
Closest in the text: …". A bare quote would read as the clause itself."""

from __future__ import annotations

import math

import pytest

from rag.models import ClauseSignal, Document
from rag.pipeline.run import run_query, stream_query
from rag.pipeline.stages.review import NO_BELOW
from rag.review import signals
from rag.review.model import SURE, clause_model
from tests.rag.review.contracts import ingest
from tests.rag.review.test_matter_lists import BOILERPLATE, matter  # noqa: F401  (the fixture)

# Uses a non-compete's words without restricting anyone: the review may doubt it either way.
MARKET = (
    "12. Market. Buyer acknowledges that products competing with the Products are sold in the Territory by "
    "third parties, and that Seller gives no assurance as to the prices at which they compete.\n\n"
    "13. Receivables. Seller may assign any invoice under this Agreement to a factoring company by notice "
    "to Buyer."
)
OPENING = (
    "Probably not: a non-compete clause was not found in Epsilon Supply Agreement (every passage was "
    "checked). Closest in the text:"
)


def set_probability(document, column: str, probability: float) -> None:
    """Make the review read `document` as holding `column` with `probability` (its signal's score
    set to the probe score the model calibrates to it)."""
    signals.compute(document)
    a, bias = clause_model().combiner
    score = (math.log(probability / (1 - probability)) - bias) / a
    ClauseSignal.objects.filter(document=document, column=column).update(score=score)


@pytest.fixture
def beta(matter):  # noqa: F811
    _, documents = matter
    return documents["Beta Supply Agreement"]


@pytest.fixture
def epsilon(tenant, matter):  # noqa: F811
    case, _ = matter
    text = f"SUPPLY AGREEMENT between Epsilon Parts Inc and Contoso Ltd.\n\n{BOILERPLATE}\n\n{MARKET}"
    return ingest(tenant, case, "Epsilon Supply Agreement", text)


@pytest.mark.django_db
def test_a_clause_the_review_doubts_is_answered_probably_not_then_the_nearest_passage(tenant, epsilon):
    between = (NO_BELOW + clause_model().threshold) / 2
    set_probability(epsilon, "non_compete", between)
    question = "Does this agreement contain a non-compete?"
    filters = {"document_ids": [epsilon.pk]}
    result = run_query(tenant=tenant, question=question, filters=filters, use_cache=False).result
    assert result["answer"].startswith(OPENING), result["answer"]
    assert "products competing with the Products" in result["answer"]  # the nearest passage, quoted
    assert {c["title"] for c in result["citations"]} == {"Epsilon Supply Agreement"}

    ctx, events = stream_query(tenant=tenant, question=question, filters=filters, use_cache=False)
    for _ in events:
        pass
    agentic = run_query(tenant=tenant, question=question, filters=filters, agentic=True, use_cache=False)
    for answered in (ctx.result, agentic.result):
        assert answered["answer"].startswith(OPENING), answered["answer"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "question",
    [
        "What does the non-compete in this agreement prohibit?",  # not a yes/no question
        "Can the supplier assign this agreement without consent?",  # allowed where nothing restricts it
    ],
)
def test_a_question_that_is_no_plain_yes_or_no_gets_the_finding_without_probably_not(
    tenant, epsilon, question
):
    column = "non_compete" if "non-compete" in question else "anti_assignment"
    set_probability(epsilon, column, (NO_BELOW + clause_model().threshold) / 2)
    filters = {"document_ids": [epsilon.pk]}
    result = run_query(tenant=tenant, question=question, filters=filters, use_cache=False).result
    noun = "A non-compete clause" if column == "non_compete" else "A restriction on assignment"
    said = result["answer"] or result["message"]  # search may find nothing to quote for it
    assert said.startswith(f"{noun} was not found in Epsilon Supply Agreement"), said


@pytest.mark.django_db
def test_a_list_marks_the_documents_the_review_is_less_sure_of(tenant, matter):  # noqa: F811
    case, documents = matter
    alpha, gamma = documents["Alpha Distribution Agreement"], documents["Gamma License Agreement"]
    # Alpha's clause quotes a defined term: the list's own words must not unbalance the quotes.
    text = Document.objects.get(pk=alpha.pk).text.replace(
        "Distributor shall not", 'the "Distributor" shall not'
    )
    Document.objects.filter(pk=alpha.pk).delete()
    alpha = ingest(tenant, case, "Alpha Distribution Agreement", text)
    set_probability(alpha, "non_compete", 0.9)
    set_probability(gamma, "non_compete", (clause_model().threshold + SURE) / 2)
    question = "Which of these agreements contain a non-compete?"
    ctx = run_query(tenant=tenant, question=question, filters={"case_ids": [case.pk]})
    answer = ctx.result["answer"]
    cited = {c["title"] for c in ctx.result["citations"]}
    assert cited == {"Alpha Distribution Agreement", "Gamma License Agreement"}, answer  # each still cited
    heading = "2 of the 4 documents checked hold a non-compete clause; the review is less sure of 1"
    assert answer.startswith(f"{heading}, marked (check):")
    assert "- Gamma License Agreement (check):" in answer
    assert "- Alpha Distribution Agreement:" in answer  # sure: no mark
    # A remote model is told the same, in the prompt's review note.
    assert (
        'less sure of the last 1 of those sources: mark each of their documents "(check)"' in ctx.prompt.user
    )


@pytest.mark.django_db
def test_a_list_the_review_is_sure_of_none_of_says_none_clearly_holds_it(tenant, matter):  # noqa: F811
    case, documents = matter
    for document in documents.values():
        set_probability(document, "non_compete", 0.05)
    gamma = documents["Gamma License Agreement"]
    set_probability(gamma, "non_compete", (clause_model().threshold + SURE) / 2)
    question = "Which of these agreements contain a non-compete?"
    ctx = run_query(tenant=tenant, question=question, filters={"case_ids": [case.pk]}, use_cache=False)
    answer = ctx.result["answer"]
    heading = "None of the 4 documents checked clearly holds a non-compete clause; the review is unsure of 1"
    assert answer.startswith(f"{heading}, marked (check):"), answer
    assert "- Gamma License Agreement (check):" in answer
    assert [c["title"] for c in ctx.result["citations"]] == ["Gamma License Agreement"]  # still linked
    assert "sure of none of them" in ctx.prompt.user  # a remote model is told the same
