"""Request options that reach the model provider through the real pipeline: `response_style`,
`strictness` and `citation_style` end_list visibly change the offline provider's answer."""

from pathlib import Path

import pytest

from rag.pipeline.run import run_query
from ragsite.exceptions import ConfigurationError
from templates_admin import services as template_services

from .conftest import MSA_TITLE

QUESTION = "Is there a confidentiality clause?"
DEMO_DOCUMENTS = Path(__file__).resolve().parents[3] / "demo" / "documents"
CONSULTING_TITLE = "Consulting Agreement — Kiromic BioPharma"


@pytest.fixture
def consulting(case, ingest_text):
    """A real consulting agreement (CUAD, demo/) long enough to answer from several passages."""
    text = (DEMO_DOCUMENTS / "consulting-agreement.txt").read_text()
    return ingest_text(case, text, filename="consulting-agreement.txt", title=CONSULTING_TITLE)


def quoted(result) -> list[str]:
    return [citation["snippet"] for citation in result["citations"]]


@pytest.mark.django_db
def test_response_style_changes_how_much_the_offline_answer_quotes(tenant, consulting):
    question = "How can the consulting agreement be terminated?"
    balanced = run_query(tenant=tenant, question=question).result
    terse = run_query(tenant=tenant, question=question, response_style="terse").result
    detailed = run_query(tenant=tenant, question=question, response_style="detailed").result
    assert len(quoted(balanced)) == 3
    assert quoted(terse) == quoted(balanced)[:1]  # the one operative sentence
    assert (
        terse["answer"]
        == f'{CONSULTING_TITLE} states: "{quoted(terse)[0]}" [{terse["citations"][0]["citation_id"]}]'
    )
    assert quoted(detailed)[:3] == quoted(balanced) and len(quoted(detailed)) > 3  # more support


@pytest.mark.django_db
def test_strictness_changes_which_supporting_quotes_the_offline_answer_keeps(tenant, consulting):
    # Room for five quotes: the windows scored about 1.0, 1.0, 1.0, 0.54, 0.20 and 0.13, so each
    # strictness's bar (strict 0.6 of the lead, normal 0.3, lenient 0.15) falls between two of them.
    question = "How is the consultant paid under the consulting agreement?"

    def answer(strictness: str) -> list[str]:
        options = {"strictness": strictness, "response_style": "detailed"}
        return quoted(run_query(tenant=tenant, question=question, **options).result)

    strict, normal, lenient = answer("strict"), answer("normal"), answer("lenient")
    assert strict == normal[: len(strict)] and len(strict) < len(normal)
    assert lenient[: len(normal)] == normal and len(lenient) > len(normal)


@pytest.mark.django_db
def test_end_list_ends_the_offline_answer_with_a_sources_list(tenant, corpus):
    plain = run_query(tenant=tenant, question=QUESTION).result
    listed = run_query(tenant=tenant, question=QUESTION, citation_style="end_list").result
    assert "Sources:" not in plain["answer"]
    body, sources = listed["answer"].split("\n\nSources:\n")
    assert body == plain["answer"]
    assert sources.splitlines() == [
        f"[{c['citation_id']}] {c['title']}, p. {c['page']}" for c in listed["citations"]
    ]
    assert MSA_TITLE in sources
    assert listed["flags"]["needs_verification"] is False


@pytest.mark.django_db
def test_rag_default_follow_up_count_applies_when_a_request_gives_none(tenant, corpus, settings):
    settings.RAG_DEFAULT_FOLLOW_UP_COUNT = 4
    assert len(run_query(tenant=tenant, question=QUESTION).result["follow_up_questions"]) == 4
    # A request's own count wins; so does the count of a template the request picks.
    assert (
        len(run_query(tenant=tenant, question=QUESTION, follow_up_count=1).result["follow_up_questions"]) == 1
    )
    terse = run_query(tenant=tenant, question=QUESTION, response_style="terse").result
    assert len(terse["follow_up_questions"]) == 1  # the built-in terse template's count


@pytest.mark.django_db
def test_an_out_of_range_default_follow_up_count_is_a_configuration_error(tenant, corpus, settings):
    settings.RAG_DEFAULT_FOLLOW_UP_COUNT = 9
    with pytest.raises(ConfigurationError) as raised:
        run_query(tenant=tenant, question=QUESTION)
    assert raised.value.status_code == 503
    assert "RAG_DEFAULT_FOLLOW_UP_COUNT" in raised.value.details


@pytest.mark.django_db
def test_a_firms_own_default_template_keeps_its_follow_up_count(tenant, corpus, settings):
    settings.RAG_DEFAULT_FOLLOW_UP_COUNT = 4
    template_services.template_update(
        tenant=tenant, template_id="legal_analysis_balanced", data={"follow_up_count": 3}
    )
    assert len(run_query(tenant=tenant, question=QUESTION).result["follow_up_questions"]) == 3
