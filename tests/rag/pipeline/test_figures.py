"""One meaning per figure: what the response's provenance, the "query finished" log line, the
Prometheus metrics and the audit row report agree, in the plain pipeline and in agentic mode
(real ingestion, retrieval, extractive model, Redis cache and PostgreSQL audit rows).

- `docs_retrieved` counts passages everywhere; `documents_retrieved` is the distinct documents.
- The search time is the time the passages took to find (retrieve, rank, rerank, or the agent's
  loop, plus chain of thought's sub-question searches), the same in the provenance, the log line
  and `rag_search_latency_seconds`.
- What stages record with `QueryContext.note()` reaches `provenance.stages` and the log line (the
  latter without any text from the question); each stage logs one DEBUG line with its time.
"""

from __future__ import annotations

import json
import logging

import pytest
from prometheus_client import REGISTRY

from rag.models import AuditLog
from rag.pipeline.run import run_query
from ragsite.logging import JsonFormatter, RequestIdFilter

TITLE = "Shi Farms Supply Agreement"
QUESTION = "When may either party terminate the supply agreement?"
SECRET_WORDS = ("either party terminate", "supply agreement?")
MODES = pytest.mark.parametrize("agentic", [False, True], ids=["sync", "agentic"])


@pytest.fixture
def supply_agreement(case, upload):
    """One document of four passages, so counting passages and counting documents differ."""
    return upload(case, "contract.pdf", filename="supply-agreement.pdf", title=TITLE).document


def ask(tenant, document, *, agentic: bool):
    """A question about `document` alone, so every one of its passages may be retrieved."""
    return run_query(
        tenant=tenant,
        question=QUESTION,
        agentic=agentic,
        cot_enabled=False,
        filters={"document_ids": [document.pk]},
    )


def formatted(record) -> str:
    RequestIdFilter().filter(record)
    line = JsonFormatter().format(record)
    for words in SECRET_WORDS:
        assert words not in line.lower(), line  # the question's text never reaches the log
    return line


def finished_line(caplog) -> dict:
    (record,) = [r for r in caplog.records if r.name == "rag.query" and r.getMessage() == "query finished"]
    return json.loads(formatted(record))


def metric(name: str, tenant) -> float:
    return REGISTRY.get_sample_value(name, {"tenant": tenant.slug}) or 0.0


@pytest.mark.django_db
@MODES
def test_docs_retrieved_counts_passages_in_the_response_the_log_line_and_the_metric(
    tenant, supply_agreement, caplog, agentic
):
    before = metric("rag_documents_retrieved_sum", tenant)
    with caplog.at_level(logging.INFO, logger="rag.query"):
        ctx = ask(tenant, supply_agreement, agentic=agentic)
    passages = len(ctx.retrieval.passages)
    assert passages > 1  # one document: passages and documents differ
    provenance = ctx.result["provenance"]
    line = finished_line(caplog)
    assert provenance["docs_retrieved"] == line["docs_retrieved"] == passages
    assert metric("rag_documents_retrieved_sum", tenant) - before == passages
    row = AuditLog.objects.get(request_id=ctx.request_id)
    assert provenance["documents_retrieved"] == line["documents_retrieved"] == [supply_agreement.pk]
    assert row.documents_retrieved == [supply_agreement.pk]
    assert provenance["docs_used"] == line["docs_used"] == len(provenance["documents_used"]) == 1


@pytest.mark.django_db
@MODES
def test_the_search_time_is_the_same_figure_everywhere_and_counts_the_agents_search(
    tenant, supply_agreement, caplog, agentic
):
    before = metric("rag_search_latency_seconds_sum", tenant)
    with caplog.at_level(logging.INFO, logger="rag.query"):
        ctx = ask(tenant, supply_agreement, agentic=agentic)
    search = (
        ("matter_review", "compare", "each_candidate", "agent")
        if agentic
        else ("matter_review", "compare", "each_candidate", "retrieve", "rank", "rerank")
    )
    expected = sum(
        ctx.timings[f"{stage}_ms"]
        for stage in (*search, "reasoning_search", "document_dates", "clause_evidence")
    )
    provenance = ctx.result["provenance"]
    line = finished_line(caplog)
    assert (
        provenance["retrieval_latency_ms"]
        == provenance["timing"]["search_ms"]
        == line["latency"]["search_ms"]
    )
    assert line["latency"]["search_ms"] == pytest.approx(expected, abs=0.02)
    assert metric("rag_search_latency_seconds_sum", tenant) - before == pytest.approx(
        expected / 1000, abs=1e-4
    )
    # Building the context is the log line's build time, not search.
    build = ctx.timings["build_context_ms"] + ctx.timings["build_prompt_ms"]
    assert line["latency"]["build_ms"] == pytest.approx(build, abs=0.02)
    if agentic:
        assert line["latency"]["search_ms"] >= ctx.timings["agent_ms"] > 1  # the agent's loop searches


@pytest.mark.django_db
@MODES
def test_stage_metadata_reaches_the_provenance_and_the_log_line(tenant, supply_agreement, caplog, agentic):
    with caplog.at_level(logging.INFO, logger="rag.query"):
        ctx = ask(tenant, supply_agreement, agentic=agentic)
    provenance = ctx.result["provenance"]
    stages = provenance["stages"]
    assert stages["build_context"]["passages"] == len(ctx.context.entries)
    assert stages["postprocess"]["citations"] == len(ctx.processed.citations)
    assert stages["enhance"]["search_query"] == QUESTION  # the caller's own question, in their response
    if agentic:
        assert stages["agent"]["tool_calls"] == ctx.agent.tool_calls > 0
    else:
        assert stages["retrieve"]["candidates"] == provenance["candidates"] > 0
    row = AuditLog.objects.get(request_id=ctx.request_id)
    assert row.result["provenance"]["stages"] == stages  # plain JSON, stored as it was returned
    logged = finished_line(caplog)["stages"]
    assert set(stages) <= set(logged)  # and the stages after the result: the cache write
    assert logged["build_context"]["passages"] == stages["build_context"]["passages"]
    assert logged["sanitize"]["prompt_injection_detected"] is False
    assert "search_query" not in logged["enhance"]  # text from the question stays out of the log
    if not agentic:
        assert logged["retrieve"]["mode"] == stages["retrieve"]["mode"]
        assert "question" not in logged["retrieve"]["routing"]


@pytest.mark.django_db
def test_a_cache_hit_reports_its_own_stages_and_keeps_the_answering_runs(tenant, supply_agreement):
    first = ask(tenant, supply_agreement, agentic=False)
    hit = ask(tenant, supply_agreement, agentic=False)
    provenance = hit.result["provenance"]
    assert hit.cache_hit and provenance["stages"]["cache_lookup"] == {"hit": True}
    assert provenance["cached_stages"] == first.result["provenance"]["stages"]
    assert provenance["docs_retrieved"] == first.result["provenance"]["docs_retrieved"]


@pytest.mark.django_db
@MODES
def test_each_stage_logs_one_debug_line_with_its_time(tenant, supply_agreement, caplog, agentic):
    with caplog.at_level(logging.DEBUG, logger="rag.pipeline.executor"):
        ctx = ask(tenant, supply_agreement, agentic=agentic)
    records = [
        r for r in caplog.records if r.name == "rag.pipeline.executor" and r.getMessage() == "stage finished"
    ]
    lines = [json.loads(formatted(record)) for record in records]
    assert all(line["level"] == "DEBUG" for line in lines)
    assert [line["stage"] for line in lines] == [name.removesuffix("_ms") for name in ctx.timings]
    for line in lines:
        assert line["ms"] == ctx.timings[f"{line['stage']}_ms"]
        assert line["request_id"] == ctx.request_id
    by_stage = {line["stage"]: line for line in lines}
    assert by_stage["build_context"]["metadata"]["passages"] == len(ctx.context.entries)
    assert by_stage["record"]["metadata"] == {}
