"""PipelineExecutor: order, timings, typed failures of critical stages (finally-stages still run),
non-critical failures recorded, halt() and runs_after_halt, unique stage names."""

import logging
import time

import pytest

from rag.pipeline.config import QueryConfig
from rag.pipeline.context import QueryContext
from rag.pipeline.executor import PipelineExecutor
from rag.pipeline.run import default_executor
from ragsite.exceptions import InvalidQuery, LLMUnavailable
from tenants.models import Tenant


class Step:
    """A stage that records its name in `ctx.stage_metadata["trace"]` and can fail, halt or sleep."""

    def __init__(self, name, *, critical=True, runs_after_halt=False, error=None, halt=None, sleep=0.0):
        self.name, self.critical, self.runs_after_halt = name, critical, runs_after_halt
        self.error, self.halt_reason, self.sleep = error, halt, sleep

    def run(self, ctx):
        ctx.stage_metadata.setdefault("trace", {}).setdefault("order", []).append(self.name)
        if self.sleep:
            time.sleep(self.sleep)
        if self.error is not None:
            raise self.error
        if self.halt_reason:
            ctx.halt(self.halt_reason)
        return ctx


class Recorder(Step):
    """A finally-stage that also remembers what the context looked like when it ran."""

    def run(self, ctx):
        self.seen_failure = ctx.failure
        self.seen_halted = ctx.halted
        return super().run(ctx)


def context():
    return QueryContext(
        tenant=Tenant(slug="t", name="T"),
        question="q",
        config=QueryConfig.from_options(),
        request_id="req_test",
    )


def order(ctx):
    return ctx.stage_metadata.get("trace", {}).get("order", [])


def test_stages_run_in_order_and_every_one_is_timed():
    executor = PipelineExecutor(
        [Step("a"), Step("b", sleep=0.02), Step("c", critical=False)], finally_stages=[Step("z")]
    )
    ctx = context()
    assert executor.execute(ctx) is ctx
    assert order(ctx) == ["a", "b", "c", "z"]
    assert list(ctx.timings) == ["a_ms", "b_ms", "c_ms", "z_ms"]
    assert all(isinstance(ms, float) and ms >= 0 for ms in ctx.timings.values())
    assert ctx.timings["b_ms"] >= 20
    assert ctx.total_ms == pytest.approx(sum(ctx.timings.values()), abs=0.01)
    assert executor.stage_names == ["a", "b", "c"]
    assert ctx.errors == [] and ctx.failure is None


def test_a_critical_failure_propagates_typed_skips_later_stages_but_runs_finally_stages():
    error = LLMUnavailable("model down")
    recorder = Recorder("record", critical=False, runs_after_halt=True)
    executor = PipelineExecutor(
        [Step("a"), Step("boom", error=error), Step("after"), Step("assemble", runs_after_halt=True)],
        finally_stages=[recorder],
    )
    ctx = context()
    with pytest.raises(LLMUnavailable) as caught:
        executor.execute(ctx)
    assert caught.value is error
    assert order(ctx) == ["a", "boom", "record"]
    assert ctx.failure is error and recorder.seen_failure is error
    assert ctx.stage_metadata["boom"] == {"failed": "LLMUnavailable"}
    assert "boom_ms" in ctx.timings and "after_ms" not in ctx.timings and "record_ms" in ctx.timings
    assert ctx.errors == []  # a critical failure is the run's failure, not a recorded stage error


def test_a_failing_finally_stage_does_not_mask_the_original_error():
    executor = PipelineExecutor(
        [Step("boom", error=InvalidQuery("bad"))],
        finally_stages=[Step("record", critical=True, error=RuntimeError("audit down")), Step("last")],
    )
    ctx = context()
    with pytest.raises(InvalidQuery):
        executor.execute(ctx)
    assert order(ctx) == ["boom", "record", "last"]
    assert ctx.errors == [{"stage": "record", "error_type": "RuntimeError", "message": "audit down"}]


def test_a_non_critical_failure_is_recorded_logged_and_the_run_goes_on(caplog):
    executor = PipelineExecutor(
        [Step("a"), Step("metrics", critical=False, error=ValueError("no gauge")), Step("c")],
        finally_stages=[Step("z")],
    )
    ctx = context()
    with caplog.at_level(logging.ERROR, logger="rag.pipeline.executor"):
        executor.execute(ctx)
    assert order(ctx) == ["a", "metrics", "c", "z"]
    assert ctx.errors == [{"stage": "metrics", "error_type": "ValueError", "message": "no gauge"}]
    assert ctx.failure is None and "metrics_ms" in ctx.timings
    (record,) = [r for r in caplog.records if r.getMessage() == "pipeline stage failed"]
    assert (record.stage, record.error) == ("metrics", "ValueError") and record.exc_info


def test_halt_skips_the_rest_except_stages_that_run_after_halt():
    recorder = Recorder("record", critical=False, runs_after_halt=True)
    executor = PipelineExecutor(
        [
            Step("lookup", halt="cache_hit"),
            Step("retrieve"),
            Step("generate"),
            Step("assemble", runs_after_halt=True),
            Step("store", critical=False, runs_after_halt=True),
        ],
        finally_stages=[recorder],
    )
    ctx = context()
    executor.execute(ctx)
    assert ctx.halted == "cache_hit" and recorder.seen_halted == "cache_hit"
    assert order(ctx) == ["lookup", "assemble", "store", "record"]
    assert set(ctx.timings) == {"lookup_ms", "assemble_ms", "store_ms", "record_ms"}


def test_finally_stages_run_after_a_halt_even_without_runs_after_halt():
    executor = PipelineExecutor([Step("a", halt="dry_run")], finally_stages=[Step("z")])
    ctx = context()
    executor.execute(ctx)
    assert order(ctx) == ["a", "z"]


@pytest.mark.parametrize(
    ("stages", "finally_stages"),
    [
        ([Step("a"), Step("b"), Step("a")], []),
        ([Step("a")], [Step("a")]),
        ([], [Step("record"), Step("record")]),
    ],
)
def test_duplicate_stage_names_are_refused(stages, finally_stages):
    with pytest.raises(ValueError, match="unique"):
        PipelineExecutor(stages, finally_stages=finally_stages)


def test_the_default_pipeline_runs_the_spec_stages_in_order():
    executor = default_executor()
    assert executor.stage_names == [
        "sanitize",
        "cache_lookup",
        "enhance",
        "matter_review",
        "compare",
        "each_candidate",
        "retrieve",
        "rank",
        "rerank",
        "reasoning_search",
        "document_dates",
        "clause_evidence",
        "select_template",
        "build_context",
        "build_prompt",
        "reasoning",
        "generate",
        "postprocess",
        "verify",
        "assemble",
        "cache_store",
    ]
    assert [stage.name for stage in executor.finally_stages] == ["record"]
    critical = {stage.name: stage.critical for stage in executor.stages}
    # Only enhancement (search as asked), adding the passages that date a document or hold a clause
    # review's evidence (the answer quotes what search found) and the cache write may fail without
    # failing the query.
    assert [name for name, is_critical in critical.items() if not is_critical] == [
        "enhance",
        "document_dates",
        "clause_evidence",
        "cache_store",
    ]
    assert [s.name for s in executor.stages if s.runs_after_halt] == ["assemble", "cache_store"]
