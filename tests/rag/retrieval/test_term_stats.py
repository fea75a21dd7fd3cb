"""Lexeme document frequencies per tenant (ts_stat), their idf, and their cache."""

from __future__ import annotations

import pytest

from rag.retrieval import term_stats
from rag.retrieval.term_stats import TermStats

from .conftest import add_chunks, make_document

pytestmark = pytest.mark.django_db


def test_idf_falls_as_a_word_gets_common():
    stats = TermStats(chunks=100, document_frequency={"rare": 1, "common": 90})
    assert stats.idf("unseen") > stats.idf("rare") > stats.idf("common") > 0
    assert stats.df("unseen") == 0


def test_frequencies_count_chunks_of_this_tenant_only(case, other_case, random_unit):
    add_chunks(make_document(case, "mine"), [random_unit()] * 3, texts=["notice period", "notice", "fees"])
    add_chunks(make_document(other_case, "theirs"), [random_unit()] * 2, texts=["notice", "notice"])
    term_stats.clear_cache()
    stats = term_stats.term_stats(tenant=case.tenant, index_version=1)
    assert stats.chunks == 3
    assert (stats.df("notic"), stats.df("period"), stats.df("fee")) == (2, 1, 1)


def test_statistics_are_rebuilt_for_a_new_corpus_version_once_stale(case, random_unit, monkeypatch):
    document = make_document(case, "doc")
    add_chunks(document, [random_unit()], texts=["notice"])
    term_stats.clear_cache()
    first = term_stats.term_stats(tenant=case.tenant, index_version=1)
    add_chunks(document, [random_unit()], texts=["notice"])
    # Same version, or a new one within MAX_STALE_SECONDS: the cached statistics.
    assert term_stats.term_stats(tenant=case.tenant, index_version=1) is first
    assert term_stats.term_stats(tenant=case.tenant, index_version=2) is first
    monkeypatch.setattr(term_stats, "MAX_STALE_SECONDS", 0.0)
    assert term_stats.term_stats(tenant=case.tenant, index_version=1) is first
    rebuilt = term_stats.term_stats(tenant=case.tenant, index_version=2)
    assert rebuilt.df("notic") == 2 and rebuilt.chunks == 2


def test_a_large_tenant_is_read_from_a_sample_scaled_to_its_size(case, random_unit, monkeypatch):
    texts = ["indemnify notice"] * 200 + ["notice"] * 800
    add_chunks(make_document(case, "big"), [random_unit()] * len(texts), texts=texts)
    monkeypatch.setattr(term_stats, "SAMPLE_CHUNKS", 250)
    assert term_stats.sampled_share(1000) == 0.25 and term_stats.sampled_share(250) == 1.0
    term_stats.clear_cache()
    stats = term_stats.term_stats(tenant=case.tenant, index_version=1)
    assert stats.chunks == 1000  # counted, not estimated
    # Page sampling reads some pages whole: the estimates are scaled (a quarter of the pages hold
    # about 250 of the 1,000), near the counts, and the same in every build of the same table. The
    # chunks span a few hundred pages, so the estimate is within about a third of the count (a
    # test of 200 chunks on some forty pages read 92 for 200 once, the table's layout changing
    # with the tests before it).
    assert 600 <= stats.df("notic") <= 1400 and stats.df("notic") > stats.df("indemnifi")
    term_stats.clear_cache()
    assert term_stats.term_stats(tenant=case.tenant, index_version=1) == stats
