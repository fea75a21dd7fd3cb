"""The packaged embedding model: offline, 384-dimensional, unit-length, order-preserving."""

import numpy as np
import pytest
from django.test import override_settings

from rag.ingest import embedding


def test_vectors_are_unit_length_and_in_input_order():
    texts = [
        "The Supplier shall indemnify the Buyer.",
        "Governing law: Delaware. " * 20,
        "Term",
        "Either party may terminate this Agreement upon thirty (30) days written notice to the other party.",
    ]
    vectors = embedding.embed(texts, batch_size=2)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Batching by token count must not reorder rows: each row equals that text embedded alone
    # (within bfloat16's rounding where the CPU runs it: padding to another length moves a vector
    # by ~1e-5 of cosine; any two of these texts are far further apart).
    for text, row in zip(texts, vectors, strict=True):
        assert float(row @ embedding.embed([text])[0]) == pytest.approx(1.0, abs=1e-4)


def test_similar_meaning_is_closer_than_unrelated_text():
    anchor, near, far = embedding.embed(
        [
            "Either party may terminate the agreement with thirty days notice.",
            "The contract can be ended by either side on 30 days' notice.",
            "The recipe calls for two cups of flour and an egg.",
        ]
    )
    assert anchor @ near > anchor @ far + 0.2


def test_empty_input():
    assert embedding.embed([]).shape == (0, 384)


def test_unknown_model_is_reported_not_downloaded():
    with override_settings(EMBEDDING_MODEL="sentence-transformers/some-hub-model"):
        with pytest.raises(embedding.EmbeddingModelUnavailable, match="local model directory"):
            embedding.resolve_model_path()
        assert embedding.model_status()["status"] == "unavailable"


def test_a_query_is_embedded_with_the_configured_threads_and_the_same_vector(settings, monkeypatch):
    import torch

    before = torch.get_num_threads()
    settings.EMBEDDING_QUERY_THREADS = 0
    default = embedding.embed(["Is there a non-compete clause?"])
    settings.EMBEDDING_QUERY_THREADS = 1
    seen = []
    original = embedding._encode

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(embedding, "_encode", spy)
    single = embedding.embed(["Is there a non-compete clause?"])
    assert seen == [1]
    assert torch.get_num_threads() == before  # restored
    assert np.allclose(default, single, atol=1e-5)


def test_auto_precision_is_bfloat16_only_where_the_cpu_computes_it(settings, monkeypatch):
    settings.EMBEDDING_PRECISION = "auto"
    monkeypatch.setattr(embedding, "native_bf16", lambda: False)
    assert embedding.precision() == "fp32"
    monkeypatch.setattr(embedding, "native_bf16", lambda: True)
    assert embedding.precision() == "bf16"
    settings.EMBEDDING_PRECISION = "fp32"
    assert embedding.precision() == "fp32"


def test_bfloat16_vectors_are_the_float32_space(settings):
    texts = [
        "The Supplier shall indemnify the Buyer against all third-party claims.",
        "This Agreement shall be governed by the laws of the State of New York. " * 5,
        "Either party may terminate this Agreement upon thirty (30) days written notice.",
        "Term",
        "The Licensee shall pay royalties quarterly.",
    ]
    settings.EMBEDDING_PRECISION = "fp32"
    exact = embedding.embed(texts, batch_size=2)
    settings.EMBEDDING_PRECISION = "bf16"
    fast = embedding.embed(texts, batch_size=2)
    assert fast.dtype == np.float32
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert (fast * exact).sum(axis=1).min() > 0.999
    assert embedding.model_status()["precision"] == "bf16"


def test_an_unknown_precision_fails_the_system_check(settings):
    from ragsite.checks import check_rag_settings

    settings.EMBEDDING_PRECISION = "fp8"
    assert any("EMBEDDING_PRECISION" in error.msg for error in check_rag_settings())
