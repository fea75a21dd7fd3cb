"""Loading the models a question needs before the first question comes.

Each model loads on first use, once per process (the embedding model, the cross-encoder, the
clause model and its clause-type descriptions, the injection detectors). In a fresh web or query
worker that made the first question, or a review table's first typed cell, wait about 10 s. A
process that will answer questions starts `warm_in_background()` as it starts: the models load
in a daemon thread, so the process is ready at once. A question arriving meanwhile waits on the
loader's lock instead of loading twice. `RAG_WARM_MODELS=false` turns it off. The health check
reports the warm-up (`state`): `"ready": true` once the models are loaded, so a load balancer or
a script can wait for it before the first question.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings

logger = logging.getLogger(__name__)

# This process's warm-up, for the health check: "off" (RAG_WARM_MODELS=false, or a process that
# answers no questions), "loading", then "ready" with the seconds it took.
_state: dict = {"status": "off"}


def state() -> dict:
    """This process's warm-up: {"status": "off" | "loading" | "ready", "seconds": …}."""
    return dict(_state)


def warm_query_models() -> dict[str, float]:
    """Load every model a question uses and run each once; the seconds each took, by name. A
    model that fails to load is logged and skipped: the question that needs it reports the
    error as it would have without the warm-up."""
    from rag.ingest import embedding
    from rag.retrieval.rerank import get_reranker
    from rag.review import meaning
    from rag.review.model import clause_model
    from rag.security.injection_model import injection_model
    from rag.security.planted_model import planted_model

    def cross_encoder():
        reranker = get_reranker()
        if reranker is not None:
            reranker.score("warm up", ["the models load before the first question"])

    steps = {
        "embedding": lambda: embedding.embed(["warm up"]),
        "cross_encoder": cross_encoder,
        "clause_model": clause_model,
        "clause_descriptions": meaning.column_meant_vectors,
        "injection_models": lambda: (injection_model(), planted_model()),
    }
    took = {}
    for name, step in steps.items():
        started = time.perf_counter()
        try:
            step()
        except Exception:  # the question that needs it will say what is wrong
            logger.exception("warm-up of %s failed", name)
            continue
        took[name] = round(time.perf_counter() - started, 3)
    return took


def warm_in_background() -> threading.Thread | None:
    """Start `warm_query_models` in a daemon thread (None when RAG_WARM_MODELS is off)."""
    if not settings.RAG_WARM_MODELS:
        return None

    def run():
        started = time.perf_counter()
        took = warm_query_models()
        seconds = round(time.perf_counter() - started, 3)
        _state.update(status="ready", seconds=seconds)
        logger.info("query models loaded", extra={"seconds": seconds, "models": took})

    _state.clear()
    _state.update(status="loading")

    thread = threading.Thread(target=run, name="lexrag-warm-up", daemon=True)
    thread.start()
    return thread
