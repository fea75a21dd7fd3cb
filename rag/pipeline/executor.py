"""Run stages in order over one QueryContext, timing each (HOUSE.md, "The pipeline").

Unlike rag_modulo's executor, a failing critical stage is not swallowed: the run stops and the
stage's typed error propagates, after the `finally_stages` (metrics and audit) have recorded the
failure. Non-critical failures are logged with the request id and kept in `ctx.errors`. Each stage
run logs one DEBUG "stage finished" line (logger `rag.pipeline.executor`) with its time in ms and
what it noted (`context.loggable_metadata`: never the question's text).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Sequence

from ragsite.exceptions import ClientDisconnected

from .base import Stage
from .context import QueryContext, loggable_metadata

logger = logging.getLogger(__name__)


class PipelineExecutor:
    def __init__(self, stages: Sequence[Stage], *, finally_stages: Sequence[Stage] = ()):
        names = [stage.name for stage in [*stages, *finally_stages]]
        duplicates = {name for name in names if names.count(name) > 1}
        if duplicates:
            raise ValueError(f"stage names must be unique; repeated: {sorted(duplicates)}")
        self.stages = tuple(stages)
        self.finally_stages = tuple(finally_stages)

    @property
    def stage_names(self) -> list[str]:
        return [stage.name for stage in self.stages]

    def execute(self, ctx: QueryContext) -> QueryContext:
        """Run every stage (see the module docstring); returns the finished context."""
        events = self.events(ctx)
        while True:
            try:
                next(events)  # nothing comes unless ctx.stream is set; a caller may ignore it
            except StopIteration as finished:
                return finished.value

    def events(self, ctx: QueryContext) -> Generator[object, None, QueryContext]:
        """`execute` as a generator: with `ctx.stream` set, a stage that can stream (has a
        `stream(ctx)` generator, like the generation stage) yields its events (rag.pipeline.
        streaming) as they come; returns the finished context. Closing the generator early (the
        client went away) stops the stage where it is, and the run is recorded as failed with
        `ClientDisconnected`."""
        try:
            for stage in self.stages:
                if ctx.halted and not stage.runs_after_halt:
                    continue
                if ctx.searched_before and getattr(stage, "searches", False):
                    continue  # a matter review has read every document in scope already, say
                ctx = yield from self._stage_events(stage, ctx)
        except GeneratorExit:
            ctx.failure = ClientDisconnected()
            raise
        except Exception as exc:
            ctx.failure = exc
            raise
        finally:
            for stage in self.finally_stages:
                ctx = self._run(stage, ctx, always=True)
        return ctx

    def record_refusal(self, ctx: QueryContext, error: Exception) -> QueryContext:
        """Run only the finally-stages for a request refused before its first stage (invalid
        options), so it is logged, counted and audited like any other failure."""
        ctx.failure = error
        for stage in self.finally_stages:
            ctx = self._run(stage, ctx, always=True)
        return ctx

    def _run(self, stage: Stage, ctx: QueryContext, *, always: bool = False) -> QueryContext:
        """Run one stage without streaming (the finally-stages, a refusal's record)."""
        steps = self._stage_events(stage, ctx, always=always, streaming=False)
        try:
            next(steps)
        except StopIteration as finished:
            return finished.value
        raise AssertionError("a stage run without streaming yielded an event")  # pragma: no cover

    def _stage_events(
        self, stage: Stage, ctx: QueryContext, *, always: bool = False, streaming: bool = True
    ) -> Generator[object, None, QueryContext]:
        started = time.perf_counter()
        try:
            stream = getattr(stage, "stream", None)
            if streaming and ctx.stream and stream is not None:
                return (yield from stream(ctx))
            return stage.run(ctx)
        except Exception as exc:
            if stage.critical and not always:
                ctx.note(stage.name, failed=type(exc).__name__)
                raise
            logger.exception(
                "pipeline stage failed", extra={"stage": stage.name, "error": type(exc).__name__}
            )
            ctx.errors.append({"stage": stage.name, "error_type": type(exc).__name__, "message": str(exc)})
            return ctx
        finally:
            ctx.timings[f"{stage.name}_ms"] = round((time.perf_counter() - started) * 1000, 2)
            _log_stage(stage.name, ctx)


def _log_stage(name: str, ctx: QueryContext) -> None:
    """One DEBUG line per stage run: its time and what it noted (without the question's text)."""
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "stage finished",
            extra={
                "request_id": ctx.request_id,
                "stage": name,
                "ms": ctx.timings[f"{name}_ms"],
                "metadata": loggable_metadata(ctx.stage_metadata.get(name, {})),
            },
        )
