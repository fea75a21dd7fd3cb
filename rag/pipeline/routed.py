"""The question's routing as search decides it (rag.retrieval.routing, then the reference-by-kind
check, rag.retrieval.service.with_ambiguity), made once per request: the matter review (does the
question name one document?), the each-candidate stage (may it mean several?) and search itself
read the same routing instead of routing the question again."""

from __future__ import annotations

from rag import selectors
from rag.retrieval import service as retrieval
from rag.retrieval.routing import Routing, route

from .context import QueryContext


def question_routing(ctx: QueryContext) -> Routing:
    """The routing of `ctx.search_query` within the request's filters, made on first use."""
    key = _key(ctx)
    if ctx.routed is None or ctx.routed[0] != key:
        version = ctx.index_version
        if version is None:
            version = selectors.index_version_get(tenant=ctx.tenant)
        routing = route(tenant=ctx.tenant, query=key[0], index_version=version, filters=ctx.config.filters)
        ctx.routed = (key, retrieval.with_ambiguity(ctx.tenant, routing, ctx.config.filters))
    return ctx.routed[1]


def known_routing(ctx: QueryContext) -> Routing | None:
    """The routing an earlier stage made for this very query and filters, or None (search routes)."""
    return ctx.routed[1] if ctx.routed is not None and ctx.routed[0] == _key(ctx) else None


def _key(ctx: QueryContext) -> tuple:
    # As search reads the query (one space between words), within the filters it searches.
    return " ".join((ctx.search_query or "").split()), ctx.config.filters
