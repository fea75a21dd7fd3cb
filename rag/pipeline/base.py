"""What a pipeline stage is (HOUSE.md, "The pipeline")."""

from __future__ import annotations

from typing import ClassVar, Protocol

from .context import QueryContext


class Stage(Protocol):
    """One step of the pipeline.

    `run` reads the context, adds its results and returns it. A `critical` stage's exception
    aborts the run (the executor re-raises it, typed: `InvalidQuery`, `VectorStoreUnavailable`,
    `LLMUnavailable`, ...); a non-critical stage's exception is logged and recorded in
    `ctx.errors`, and the run goes on. `runs_after_halt` stages run even after a stage halted
    the run (cache hit, dry run, nothing found).
    """

    name: ClassVar[str]
    critical: ClassVar[bool]
    runs_after_halt: ClassVar[bool]

    def run(self, ctx: QueryContext) -> QueryContext: ...
