"""Hallucination mitigation end to end with fake models: strict re-runs (bounded by
RAG_MAX_RETRIES_ON_HALLUCINATION), stripped citations, disclaimers and flags; "I don't know" when
nothing valid is left; provider failures propagate typed and are audited."""

import json
import logging

import pytest
from prometheus_client import REGISTRY

from rag.models import AuditLog
from rag.pipeline.result import NOT_FOUND_MESSAGE
from rag.pipeline.run import run_query
from rag.pipeline.stages.answer import RERUN_NOTE, UNVERIFIED_DISCLAIMER
from ragsite.exceptions import GenerationTimeout, LLMUnavailable
from ragsite.logging import JsonFormatter

QUESTION = "Is there a confidentiality clause?"
STRICT = "You MUST ONLY use provided sources. Cite EVERY claim."
CONFIDENTIAL_SENTENCE = (
    "Each party shall keep the other party's Confidential Information secret and shall not disclose it "
    "to any third party without prior written consent."
)
FAITHFUL = f'The agreement requires secrecy: "{CONFIDENTIAL_SENTENCE}" [1]'
INVENTED = {
    "answer": f"{FAITHFUL} It also permits disclosure to affiliates [9].",
    "citations": [
        {"id": "1", "snippet": CONFIDENTIAL_SENTENCE},
        {"id": "9", "snippet": "Affiliates may receive Confidential Information."},
    ],
    "follow_ups": ["Who counts as an affiliate?"],
    "confidence": 0.9,
    "disclaimer": "Not legal advice.",
}
CORRECT = {
    "answer": FAITHFUL,
    "citations": [{"id": "1", "snippet": CONFIDENTIAL_SENTENCE}],
    "follow_ups": ["How long does it last?"],
    "confidence": 0.9,
    "disclaimer": "Not legal advice.",
}


def sample(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.django_db
def test_an_invented_citation_is_re_run_strictly_stripped_and_disclaimed(tenant, corpus, fake_provider):
    provider = fake_provider(INVENTED)
    detected = sample("rag_hallucinations_detected_total", tenant=tenant.slug)
    ctx = run_query(tenant=tenant, question=QUESTION)
    result = ctx.result

    assert provider.calls == 1 + 2  # RAG_MAX_RETRIES_ON_HALLUCINATION defaults to 2
    first, *reruns = provider.requests
    assert STRICT not in first.system and not first.prompt.endswith(RERUN_NOTE)
    for request in reruns:
        assert STRICT in request.system
        assert request.prompt.endswith(RERUN_NOTE)
        assert request.sources == first.sources

    assert "[9]" not in result["answer"]
    assert result["answer"] == f"{FAITHFUL} It also permits disclosure to affiliates."
    assert [c["citation_id"] for c in result["citations"]] == ["1"]
    assert result["disclaimer"] == f"{UNVERIFIED_DISCLAIMER} Not legal advice."
    flags = result["flags"]
    assert flags["hallucination_detected"] is True and flags["hallucination_warning"] is True
    assert flags["invalid_citations"] == ["9"]
    assert flags["mitigations_applied"] == ["re-run", "removed", "disclaimer"]
    assert flags["mitigation_applied"] == "disclaimer"  # the spec's one value: what the answer was left with
    assert flags["needs_verification"] is True
    provenance = result["provenance"]
    assert provenance["model_calls"] == 3 and provenance["tokens_used"] == 3 * 150
    assert provenance["cost_estimate"] == pytest.approx(3 * 0.0015)
    assert provenance["verification"]["retries"] == 2
    assert provenance["verification"]["invalid_citations"] == ["9"]
    assert sample("rag_hallucinations_detected_total", tenant=tenant.slug) == detected + 1
    row = AuditLog.objects.get(request_id=ctx.request_id)
    assert row.flags["hallucination_detected"] is True and row.status == "answered"
    assert row.tokens_used == 450


@pytest.mark.django_db
@pytest.mark.parametrize("retries", [0, 1, 3])
def test_re_runs_are_bounded_by_the_setting(tenant, corpus, fake_provider, settings, retries):
    settings.RAG_MAX_RETRIES_ON_HALLUCINATION = retries
    provider = fake_provider(INVENTED)
    result = run_query(tenant=tenant, question=QUESTION).result
    assert provider.calls == 1 + retries
    mitigation = result["flags"]["mitigations_applied"]
    assert ("re-run" in mitigation) == (retries > 0)
    assert mitigation[-2:] == ["removed", "disclaimer"]
    assert "[9]" not in result["answer"]


@pytest.mark.django_db
def test_a_correct_re_run_is_kept(tenant, corpus, fake_provider):
    provider = fake_provider(INVENTED, CORRECT)
    result = run_query(tenant=tenant, question=QUESTION).result
    assert provider.calls == 2  # no further re-run once an answer passes
    assert STRICT in provider.requests[1].system
    assert result["answer"] == FAITHFUL
    assert result["disclaimer"] == "Not legal advice."
    assert result["follow_up_questions"][0] == "How long does it last?"
    assert result["flags"]["hallucination_detected"] is True  # the first answer's, reported
    assert result["flags"]["invalid_citations"] == ["9"]
    assert result["flags"]["mitigations_applied"] == ["re-run"]
    assert result["flags"]["mitigation_applied"] == "re-run"
    assert result["provenance"]["verification"]["invalid_citations"] == []
    assert result["flags"]["needs_verification"] is False  # the returned answer passed every check


@pytest.mark.django_db
def test_an_uncited_re_run_does_not_replace_a_cited_answer(tenant, corpus, fake_provider):
    uncited = {"answer": "It lasts a while.", "citations": [], "follow_ups": [], "confidence": 0.9}
    provider = fake_provider(INVENTED, uncited)
    result = run_query(tenant=tenant, question=QUESTION).result
    assert provider.calls == 3
    assert result["answer"] is not None and result["citations"]  # the first answer, mitigated
    assert "[9]" not in result["answer"]
    assert result["flags"]["mitigations_applied"] == ["re-run", "removed", "disclaimer"]


@pytest.mark.django_db
def test_a_worse_re_run_does_not_replace_the_first_answer(tenant, corpus, fake_provider):
    worse = {
        **INVENTED,
        "answer": f"{INVENTED['answer']} Breach costs $1m [7].",
        "citations": INVENTED["citations"],
    }
    provider = fake_provider(INVENTED, worse)
    result = run_query(tenant=tenant, question=QUESTION).result
    assert provider.calls == 3
    assert "Breach costs" not in result["answer"]


@pytest.mark.django_db
def test_a_misquote_that_leaves_nothing_valid_is_i_dont_know(tenant, corpus, fake_provider):
    misquote = "Each party may freely disclose Confidential Information to anyone."
    provider = fake_provider(
        {"answer": f'"{misquote}" [1]', "citations": [{"id": "1", "snippet": misquote}], "confidence": 0.9}
    )
    ctx = run_query(tenant=tenant, question=QUESTION)
    result = ctx.result
    assert provider.calls == 3
    assert result["answer"] is None and result["message"] == NOT_FOUND_MESSAGE
    assert result["citations"] == []
    assert result["provenance"]["not_found_reason"] == "no_valid_citations"
    assert result["flags"]["hallucination_detected"] is True
    assert "removed" in result["flags"]["mitigations_applied"]
    assert misquote not in str(result)


@pytest.mark.django_db
def test_an_answer_without_citations_is_i_dont_know(tenant, corpus, fake_provider):
    provider = fake_provider(
        {
            "answer": "Yes, the agreement has a strict confidentiality clause.",
            "citations": [],
            "confidence": 0.95,
        }
    )
    result = run_query(tenant=tenant, question=QUESTION).result
    assert provider.calls == 1  # nothing to re-run for: no citation was wrong
    assert result["answer"] is None and result["message"] == NOT_FOUND_MESSAGE
    assert result["citations"] == [] and result["follow_up_questions"] == []
    assert result["provenance"]["not_found_reason"] == "no_valid_citations"
    assert result["flags"]["needs_verification"] is True


@pytest.mark.django_db
def test_an_uncited_answer_logs_a_warning_with_the_request_id(tenant, corpus, fake_provider, caplog):
    """The spec's NoCitationsFound: a warning with the request id and the model's reply."""
    fake_provider({"answer": "Yes, there is a strict clause.", "citations": [], "confidence": 0.95})
    with caplog.at_level(logging.WARNING, logger="rag.query"):
        result = run_query(tenant=tenant, question=QUESTION).result
    [record] = [r for r in caplog.records if getattr(r, "event", None) == "no_citations_found"]
    assert record.levelno == logging.WARNING and "NoCitationsFound" in record.getMessage()
    assert record.request_id == result["request_id"] and record.tenant_id == tenant.pk
    assert "Yes, there is a strict clause." in record.llm_output
    assert QUESTION not in record.getMessage() + json.dumps(vars(record), default=str)
    # As the JSON log line shows it.
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == result["request_id"] and line["event"] == "no_citations_found"


@pytest.mark.django_db
def test_a_cited_answer_logs_no_such_warning(tenant, corpus, fake_provider, caplog):
    fake_provider(CORRECT)
    with caplog.at_level(logging.WARNING, logger="rag.query"):
        run_query(tenant=tenant, question=QUESTION)
    assert not [r for r in caplog.records if getattr(r, "event", None) == "no_citations_found"]


@pytest.mark.django_db
def test_a_model_saying_it_does_not_know_is_i_dont_know(tenant, corpus, fake_provider):
    fake_provider({"answer": "I don't know.", "citations": [], "confidence": 0})
    result = run_query(tenant=tenant, question=QUESTION).result
    assert result["answer"] is None and result["message"] == NOT_FOUND_MESSAGE
    assert result["provenance"]["not_found_reason"] == "model_did_not_know"


@pytest.mark.django_db
@pytest.mark.parametrize("error", [GenerationTimeout("too slow"), LLMUnavailable("connection refused")])
def test_a_provider_failure_propagates_and_is_audited(tenant, corpus, fake_provider, error):
    fake_provider(error=error)
    failed = sample(
        "rag_queries_total", tenant=tenant.slug, template="legal_analysis_balanced", status="failed"
    )
    with pytest.raises(type(error)) as caught:
        run_query(tenant=tenant, question=QUESTION, request_id="req_provider_failure")
    assert caught.value is error
    row = AuditLog.objects.get(request_id="req_provider_failure")
    assert row.tenant_id == tenant.pk
    assert (row.status, row.error_type) == ("failed", type(error).__name__)
    assert row.query == QUESTION and row.template_id == "legal_analysis_balanced"
    # Retrieval happened before the model failed; no model call succeeded, so nothing was paid.
    assert row.documents_retrieved and row.tokens_used == 0
    after = sample(
        "rag_queries_total", tenant=tenant.slug, template="legal_analysis_balanced", status="failed"
    )
    assert after == failed + 1


@pytest.mark.django_db
def test_a_failure_during_a_re_run_propagates_too(tenant, corpus, fake_provider):
    def too_slow(request):
        raise GenerationTimeout("re-run too slow")

    provider = fake_provider(INVENTED, too_slow)
    with pytest.raises(GenerationTimeout):
        run_query(tenant=tenant, question=QUESTION, request_id="req_rerun_failure")
    assert provider.calls == 2
    row = AuditLog.objects.get(request_id="req_rerun_failure")
    assert (row.status, row.error_type) == ("failed", "GenerationTimeout")
    # The first call was made and paid for before the re-run failed: the audit says so.
    assert (row.tokens_used, row.cost_estimate, row.model) == (150, 0.0015, "fake-1")
    assert row.documents_retrieved


@pytest.mark.django_db
def test_an_invented_passage_token_of_bracketed_ids_is_caught(tenant, corpus, fake_provider):
    """Under bracketed_ids a document's second passage is "doc_<id>_2"; a token of that shape that
    names no passage is an invented citation too."""

    def answer(request):
        (source,) = request.sources
        token = source.citation_id
        return {
            "answer": f'"{CONFIDENTIAL_SENTENCE}" [{token}] It also binds affiliates [{token}_7].',
            "citations": [{"id": token, "snippet": CONFIDENTIAL_SENTENCE}],
            "confidence": 0.9,
        }

    provider = fake_provider(answer)
    result = run_query(tenant=tenant, question=QUESTION, citation_style="bracketed_ids").result
    token = f"doc_{corpus['msa'].pk}"
    assert provider.calls == 3
    assert result["flags"]["invalid_citations"] == [f"{token}_7"]
    assert result["answer"] == f'"{CONFIDENTIAL_SENTENCE}" [{token}] It also binds affiliates.'
    assert [c["citation_id"] for c in result["citations"]] == [token]
