"""freeze_long_lived: garbage is collected first, what survives is exempt from later collections."""

import gc
import weakref

from ragsite.heap import freeze_long_lived


class _Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector can free it


def test_garbage_is_collected_before_the_rest_is_frozen():
    gc.disable()  # no automatic collection may free the cycle before the call does
    try:
        garbage = _Node()
        gone = weakref.ref(garbage)
        kept = _Node()
        del garbage
        before = gc.get_freeze_count()
        frozen = freeze_long_lived()
        assert gone() is None  # collected, not frozen
        assert frozen > before
        assert all(kept is not obj for obj in gc.get_objects())  # frozen objects are not tracked
    finally:
        gc.enable()
        gc.unfreeze()


def test_the_embedding_model_is_frozen_once_loaded(monkeypatch):
    from rag.ingest import embedding

    class LoadedModel:  # loading the real one again would take seconds and prove nothing more
        def __init__(self, path, device):
            pass

        def get_embedding_dimension(self):
            return embedding.EMBEDDING_DIMENSION

    monkeypatch.setattr("sentence_transformers.SentenceTransformer", LoadedModel)
    monkeypatch.setattr(embedding, "_model", None)
    calls = []
    monkeypatch.setattr(embedding, "freeze_long_lived", lambda: calls.append(1))
    embedding.get_model()
    embedding.get_model()
    assert calls == [1]
