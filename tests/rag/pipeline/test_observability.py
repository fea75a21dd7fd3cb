"""Observability: one append-only audit row per query, the spec's JSON log line (without the
question's text), and the spec's Prometheus metrics."""

import json
import logging

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from prometheus_client import REGISTRY

from rag.models import AuditLog
from rag.pipeline.run import run_query
from ragsite.exceptions import InvalidQuery
from ragsite.logging import JsonFormatter, RequestIdFilter
from tests.factories import MembershipFactory

QUESTION = "Is there a confidentiality clause?"
SECRET_WORDS = "confidentiality clause"
TEMPLATE = "legal_analysis_balanced"


def sample(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


# --- audit -------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_one_audit_row_per_query_records_what_happened(tenant, corpus, member):
    before = AuditLog.objects.count()
    ctx = run_query(tenant=tenant, question=QUESTION, user_id=member.pk, conversation_id="conv-9")
    assert AuditLog.objects.count() == before + 1
    row = AuditLog.objects.get(request_id=ctx.request_id)
    result = ctx.result
    provenance = result["provenance"]
    assert (row.tenant_id, row.user_id, row.conversation_id) == (tenant.pk, member.pk, "conv-9")
    assert (row.query, row.search_query, row.template_id) == (QUESTION, "", TEMPLATE)
    assert (row.status, row.error_type, row.cache_hit) == ("answered", "", False)
    assert row.documents_retrieved == provenance["documents_retrieved"]
    assert row.documents_used == [corpus["msa"].pk] == provenance["documents_used"]
    assert row.flags == result["flags"]
    assert row.confidence == result["confidence_score"]
    # Every stage up to the audit row itself: the result's stages, assembling and the cache write.
    assert row.latency_ms == pytest.approx(ctx.total_ms - ctx.timings["record_ms"], abs=0.02)
    assert row.latency_ms > provenance["timing"]["total_ms"] > 0
    assert (row.tokens_used, row.cost_estimate) == (provenance["tokens_used"], 0.0)
    assert (row.model_provider, row.model) == ("extractive", "extractive-v1")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("question", "options", "status"),
    [
        ("What is the airspeed velocity of an unladen swallow?", {}, "not_found"),
        (QUESTION, {"dry_run": True}, "dry_run"),
    ],
)
def test_the_audit_status_of_other_outcomes(tenant, corpus, question, options, status):
    ctx = run_query(tenant=tenant, question=question, **options)
    row = AuditLog.objects.get(request_id=ctx.request_id)
    assert row.status == status and row.tokens_used == 0


@pytest.mark.django_db
def test_a_refused_question_is_audited_as_failed(tenant, corpus):
    with pytest.raises(InvalidQuery):
        run_query(tenant=tenant, question="x" * 600, request_id="req_too_long_question")
    row = AuditLog.objects.get(request_id="req_too_long_question")
    assert (row.status, row.error_type) == ("failed", "InvalidQuery")
    assert row.query == "x" * 600


@pytest.mark.django_db
def test_an_audit_row_cannot_be_changed(tenant, corpus):
    ctx = run_query(tenant=tenant, question=QUESTION)
    row = AuditLog.objects.get(request_id=ctx.request_id)
    row.status = "failed"
    with pytest.raises(ValidationError):
        row.save()
    for sql in (
        "UPDATE rag_auditlog SET status = 'failed' WHERE id = %s",
        "UPDATE rag_auditlog SET query = 'rewritten', user_id = NULL WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [row.pk])
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditLog.objects.filter(pk=row.pk).update(confidence=0.0)
    assert AuditLog.objects.get(pk=row.pk).status == "answered"


@pytest.mark.django_db
def test_deleting_the_user_is_the_one_change_allowed(tenant, corpus):
    user = MembershipFactory(tenant=tenant).user
    ctx = run_query(tenant=tenant, question=QUESTION, user_id=user.pk)
    user.delete()
    row = AuditLog.objects.get(request_id=ctx.request_id)
    assert row.user_id is None and row.status == "answered"


# --- the log line ------------------------------------------------------------------------------------


def finished_line(caplog) -> dict:
    (record,) = [r for r in caplog.records if r.name == "rag.query" and r.getMessage() == "query finished"]
    RequestIdFilter().filter(record)
    line = JsonFormatter().format(record)
    assert SECRET_WORDS not in line.lower()  # the question's text never reaches the log
    return json.loads(line)


@pytest.mark.django_db
def test_the_query_finished_log_line_has_the_spec_fields(tenant, corpus, caplog):
    with caplog.at_level(logging.INFO, logger="rag.query"):
        ctx = run_query(tenant=tenant, question=QUESTION)
    line = finished_line(caplog)
    assert {
        "query_id",
        "tenant_id",
        "template_id",
        "docs_retrieved",
        "docs_used",
        "similarity_distribution",
        "model_used",
        "latency",
        "flags",
    } <= set(line)
    assert (line["query_id"], line["tenant_id"], line["template_id"]) == (ctx.request_id, tenant.pk, TEMPLATE)
    assert line["docs_retrieved"] == ctx.result["provenance"]["docs_retrieved"] == len(ctx.retrieval.passages)
    assert line["docs_used"] == 1
    scores = [p.similarity_score for p in ctx.retrieval.passages]
    assert line["similarity_distribution"] == {
        "min": round(min(scores), 4),
        "max": round(max(scores), 4),
        "avg": round(sum(scores) / len(scores), 4),
    }
    assert line["model_used"] == "extractive/extractive-v1"
    assert set(line["latency"]) == {"search_ms", "rank_ms", "build_ms", "inference_ms", "post_ms", "total_ms"}
    timings = ctx.timings
    assert line["latency"]["rank_ms"] == timings["rank_ms"]
    assert line["latency"]["search_ms"] == pytest.approx(
        timings["matter_review_ms"]
        + timings["compare_ms"]
        + timings["each_candidate_ms"]
        + timings["retrieve_ms"]
        + timings["rank_ms"]
        + timings["rerank_ms"]
        + timings["reasoning_search_ms"]
        + timings["document_dates_ms"]
        + timings["clause_evidence_ms"],
        abs=0.02,
    )
    assert line["latency"]["build_ms"] == pytest.approx(
        timings["build_context_ms"] + timings["build_prompt_ms"], abs=0.02
    )
    assert line["latency"]["post_ms"] == pytest.approx(
        timings["postprocess_ms"] + timings["verify_ms"], abs=0.02
    )
    assert line["latency"]["inference_ms"] == ctx.generation.latency_ms
    assert line["latency"]["total_ms"] > 0
    assert {"cache_hit", "fallback", "hallucination"} <= set(line["flags"])
    assert (line["flags"]["cache_hit"], line["flags"]["fallback"], line["flags"]["hallucination"]) == (
        False,
        False,
        False,
    )


@pytest.mark.django_db
def test_the_log_line_of_a_cache_hit_and_of_a_fallback(tenant, corpus, caplog):
    run_query(tenant=tenant, question=QUESTION)
    with caplog.at_level(logging.INFO, logger="rag.query"):
        run_query(tenant=tenant, question=QUESTION)
    assert finished_line(caplog)["flags"]["cache_hit"] is True
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="rag.query"):
        run_query(tenant=tenant, question="Is there a confidentiality clause about the airspeed of swallows?")
    line = finished_line(caplog)
    assert line["flags"]["fallback"] is True and line["docs_used"] == 0


@pytest.mark.django_db
def test_the_log_line_of_a_hallucination(tenant, corpus, caplog, fake_provider):
    fake_provider(
        {"answer": "Disclosure to affiliates is allowed [9].", "citations": [{"id": "9"}], "confidence": 0.9}
    )
    with caplog.at_level(logging.INFO, logger="rag.query"):
        run_query(tenant=tenant, question=QUESTION)
    line = finished_line(caplog)
    assert line["flags"]["hallucination"] is True and line["model_used"] == "fake/fake-1"
    assert line["latency"]["inference_ms"] == pytest.approx(3 * 7.5)


# --- metrics -----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_spec_metrics_increase(tenant, corpus):
    slug = tenant.slug
    names = {
        "queries": ("rag_queries_total", {"tenant": slug, "template": TEMPLATE, "status": "answered"}),
        "duration": ("rag_query_duration_seconds_count", {"tenant": slug, "template": TEMPLATE}),
        "retrieved": ("rag_documents_retrieved_count", {"tenant": slug}),
        "retrieved_sum": ("rag_documents_retrieved_sum", {"tenant": slug}),
        "search": ("rag_search_latency_seconds_count", {"tenant": slug}),
        "calls": ("rag_model_calls_total", {"provider": "extractive", "model": "extractive-v1"}),
        "tokens": ("rag_model_tokens_used_sum", {"provider": "extractive"}),
        "cost": ("rag_model_cost_estimate_count", {"provider": "extractive"}),
        "citations": ("rag_citations_per_response_sum", {"template": TEMPLATE}),
        "confidence": ("rag_confidence_score_count", {"template": TEMPLATE}),
        "misses": ("rag_cache_misses_total", {"tenant": slug}),
        "hits": ("rag_cache_hits_total", {"tenant": slug}),
    }
    before = {key: sample(name, **labels) for key, (name, labels) in names.items()}
    ctx = run_query(tenant=tenant, question=QUESTION)
    after = {key: sample(name, **labels) for key, (name, labels) in names.items()}
    delta = {key: round(after[key] - before[key], 6) for key in names}
    assert delta == {
        "queries": 1,
        "duration": 1,
        "retrieved": 1,
        "retrieved_sum": len(ctx.retrieval.passages),
        "search": 1,
        "calls": 1,
        "tokens": ctx.generation.tokens_used,
        "cost": 1,
        "citations": 1,
        "confidence": 1,
        "misses": 1,
        "hits": 0,
    }


@pytest.mark.django_db
def test_outcomes_are_counted_by_status(tenant, corpus):
    def count(status, template=TEMPLATE):
        return sample("rag_queries_total", tenant=tenant.slug, template=template, status=status)

    statuses = ("answered", "not_found", "dry_run", "failed")
    before = {status: count(status) for status in statuses}
    unknown = count("failed", "unknown")
    run_query(tenant=tenant, question="What is the airspeed velocity of an unladen swallow?")
    run_query(tenant=tenant, question=QUESTION, dry_run=True)
    run_query(tenant=tenant, question=QUESTION, follow_up_count=1)
    with pytest.raises(InvalidQuery):
        run_query(tenant=tenant, question="   ")  # refused before a template is chosen
    assert {status: count(status) - before[status] for status in statuses} == {
        "answered": 1,
        "not_found": 1,
        "dry_run": 1,
        "failed": 0,
    }
    assert count("failed", "unknown") == unknown + 1


@pytest.mark.django_db
def test_an_unknown_template_id_never_becomes_a_metric_label(tenant, corpus):
    """Metric labels must not take values from the request: each would start a new time series."""
    from ragsite.exceptions import NotFound

    unknown = sample("rag_queries_total", tenant=tenant.slug, template="unknown", status="failed")
    with pytest.raises(NotFound):
        run_query(tenant=tenant, question=QUESTION, template_id="made-up-by-the-caller-1234")
    templates = {
        point.labels["template"]
        for metric in REGISTRY.collect()
        if metric.name.startswith("rag_")
        for point in metric.samples
        if "template" in point.labels
    }
    assert TEMPLATE in templates or "unknown" in templates
    assert "made-up-by-the-caller-1234" not in templates
    assert sample("rag_queries_total", tenant=tenant.slug, template="unknown", status="failed") == unknown + 1
    # The audit row still says what was asked for.
    assert AuditLog.objects.filter(tenant=tenant, template_id="made-up-by-the-caller-1234").count() == 1
