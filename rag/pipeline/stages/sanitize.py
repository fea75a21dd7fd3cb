"""Stage 1: clean and check the question (rag.pipeline.sanitize)."""

from __future__ import annotations

from collections.abc import Generator

from ..context import QueryContext
from ..sanitize import sanitize
from ..streaming import Accepted


class SanitizeStage:
    name = "sanitize"
    critical = True  # an invalid or refused question stops here (InvalidQuery, PromptInjectionDetected)
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        ctx.sanitized = sanitize(ctx.question, tenant_id=ctx.tenant.pk, options=ctx.config.cache_fields())
        ctx.search_query = ctx.sanitized.sanitized_query
        ctx.note(
            self.name,
            language=ctx.sanitized.detected_language,
            tokens=ctx.sanitized.token_count,
            prompt_injection_detected=ctx.sanitized.prompt_injection_detected,
            injection_patterns=list(ctx.sanitized.injection_patterns),
        )
        return ctx

    def stream(self, ctx: QueryContext) -> Generator[object, None, QueryContext]:
        """`run`, then `Accepted`: a streamed answer's response starts here, so a refused question
        is still an ordinary JSON error and everything after it shows as it happens."""
        ctx = self.run(ctx)
        yield Accepted()
        return ctx
