"""Semantic search against real pgvector: relevance, k, model isolation, HNSW iterative scans,
per-search settings and failure mapping."""

from __future__ import annotations

import time

import numpy as np
import psycopg
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from rag.ingest import embedding
from rag.models import Chunk
from rag.retrieval import SearchFilters, keyword_search, nearest_chunks, semantic_search, vector
from ragsite.exceptions import InvalidQuery, VectorStoreUnavailable

from .conftest import add_chunks, make_document, unit

pytestmark = pytest.mark.django_db


def _question(text: str) -> np.ndarray:
    return embedding.embed([text])[0]


def _chunk_texts(hits) -> list[str]:
    texts = dict(Chunk.objects.filter(pk__in=[h.chunk_id for h in hits]).values_list("pk", "text"))
    return [texts[h.chunk_id] for h in hits]


def test_a_paraphrased_question_finds_the_governing_law_clause(case, upload):
    document = upload(case, "contract.docx").document
    assert Chunk.objects.filter(document=document).count() >= 3

    hits = semantic_search(
        tenant=case.tenant,
        query_vector=_question("Which state's courts and laws apply to disagreements under this deal?"),
        k=2,
    )

    assert "State of Colorado" in _chunk_texts(hits)[0]
    assert all(hit.document_id == document.pk for hit in hits)


def test_k_is_honoured_and_hits_are_best_first_with_cosine_similarity(case, upload):
    upload(case, "contract.docx")
    vector = _question("payment for the hemp biomass")
    for k in (1, 2, 3):
        hits = semantic_search(tenant=case.tenant, query_vector=vector, k=k)
        assert len(hits) == k
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    best = Chunk.objects.get(pk=hits[0].chunk_id)
    assert hits[0].score == pytest.approx(float(np.dot(best.embedding, vector)), abs=1e-4)
    assert hits[0].similarity == hits[0].score and hits[0].keyword_score is None


def test_chunks_of_another_embedding_model_are_never_returned(case, random_unit):
    query = random_unit()
    document = make_document(case, "two models")
    (current,) = add_chunks(document, [unit(query + 0.5 * random_unit())])
    # A perfect match, but embedded in another model's space.
    (stale,) = add_chunks(document, [query], embedding_model="old-model-v0")

    hits = semantic_search(tenant=case.tenant, query_vector=query, k=10)
    assert [h.chunk_id for h in hits] == [current.pk]

    old = semantic_search(tenant=case.tenant, query_vector=query, k=10, embedding_model="old-model-v0")
    assert [h.chunk_id for h in old] == [stale.pk]


def test_invalid_k_and_ef_search_are_invalid_queries(case, random_unit):
    for bad in ({"k": 0}, {"k": "5"}, {"k": 3, "ef_search": 0}, {"k": 3, "ef_search": 5000}):
        with pytest.raises(InvalidQuery) as caught:
            semantic_search(tenant=case.tenant, query_vector=random_unit(), **bad)
        assert set(caught.value.details) <= {"k", "ef_search"}


def test_a_selective_filter_still_returns_k_rows_from_the_hnsw_index(case, monkeypatch):
    """Most of the tenant's chunks are memos close to the query; the 5 judgments are farther than
    every memo. An HNSW scan without iterative scanning sees only its ef_search nearest
    candidates, all memos, and returns nothing; the search must still return the 5."""
    # A fresh direction each run: index entries of rolled-back rows (earlier runs on the reused
    # test database) stay in the HNSW graph until vacuum, and would crowd a fixed query.
    rng = np.random.default_rng()
    query = unit(rng.standard_normal(384))
    memos = make_document(case, "memos", doc_type="memo")
    add_chunks(memos, [unit(query + 0.6 * unit(rng.standard_normal(384))) for _ in range(1000)])  # cos ~0.86
    judgments = make_document(case, "judgments", doc_type="judgment")
    add_chunks(judgments, [unit(query + 2.5 * unit(rng.standard_normal(384))) for _ in range(5)])  # ~0.37
    only_judgments = SearchFilters(doc_types=("judgment",))
    monkeypatch.setattr(vector, "EXACT_SEARCH_ROWS", 0)  # never exact: the HNSW path is under test
    monkeypatch.setattr(vector, "EXACT_SEARCH_SHARE", 0.0)

    with transaction.atomic():
        with connection.cursor() as cursor:
            # Force the HNSW index even on a small, never-analyzed table: without them the planner
            # rightly prefers the tenant's btree index and an exact sort of its few rows.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
            cursor.execute("SET LOCAL hnsw.ef_search = 40")
            cursor.execute("SET LOCAL hnsw.iterative_scan = off")
        query_set = nearest_chunks(tenant=case.tenant, query_vector=query, k=5, filters=only_judgments)
        plan = query_set.explain()
        without_iterative_scan = list(query_set)

        hits = semantic_search(tenant=case.tenant, query_vector=query, k=5, filters=only_judgments)
        transaction.set_rollback(True)

    assert "chunk_embedding_hnsw" in plan
    assert len(without_iterative_scan) < 5  # the scenario really needs the iterative scan
    assert len(hits) == 5
    assert {h.document_id for h in hits} == {judgments.pk}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_filter_leaving_few_chunks_is_searched_exactly(case, rng, monkeypatch):
    monkeypatch.setattr(vector, "EXACT_SEARCH_ROWS", 100)
    monkeypatch.setattr(vector, "EXACT_SEARCH_SHARE", 0.0)
    query = unit(rng.standard_normal(384))
    memos = make_document(case, "memos", doc_type="memo")
    add_chunks(memos, [unit(query + 0.6 * unit(rng.standard_normal(384))) for _ in range(300)])
    judgments = make_document(case, "judgments", doc_type="judgment")
    vectors = [unit(query + rng.uniform(1, 3) * unit(rng.standard_normal(384))) for _ in range(60)]
    chunks = add_chunks(judgments, vectors)
    expected = [chunks[i].pk for i in np.argsort([-float(v @ query) for v in vectors])[:10]]

    with CaptureQueriesContext(connection) as queries:
        hits = semantic_search(
            tenant=case.tenant, query_vector=query, k=10, filters=SearchFilters(doc_types=("judgment",))
        )
    assert [hit.chunk_id for hit in hits] == expected
    assert any("enable_indexscan" in q["sql"] for q in queries.captured_queries)
    # Without a filter, or with one leaving more than EXACT_SEARCH_ROWS chunks: the HNSW index.
    with CaptureQueriesContext(connection) as queries:
        semantic_search(tenant=case.tenant, query_vector=query, k=10)
        memos_only = SearchFilters(doc_types=("memo",))
        semantic_search(tenant=case.tenant, query_vector=query, k=10, filters=memos_only)
    assert not any("enable_indexscan" in q["sql"] for q in queries.captured_queries)


def test_a_scope_that_is_a_small_share_of_a_large_table_is_searched_exactly(monkeypatch):
    monkeypatch.setattr(vector, "EXACT_SEARCH_ROWS", 5000)
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'rag_chunk'::regclass")
        estimate = max(cursor.fetchone()[0], 0)
    # A table of the test's size: the floor.
    assert vector.exact_search_limit() == max(5000, min(15_000, int(estimate * 0.015)))
    with connection.cursor() as cursor:  # as ANALYZE would record a table of 1.1M rows
        cursor.execute("UPDATE pg_class SET reltuples = 1100000 WHERE oid = 'rag_chunk'::regclass")
    assert vector.exact_search_limit() == 15_000  # 1.5 % would be 16,500: capped
    with connection.cursor() as cursor:
        cursor.execute("UPDATE pg_class SET reltuples = 600000 WHERE oid = 'rag_chunk'::regclass")
    assert vector.exact_search_limit() == 9_000


def test_a_large_graph_gets_twice_the_configured_ef_search(case, random_unit, settings):
    settings.VECTOR_STORE_EF_SEARCH = 200
    assert vector.ef_search_for(100_000) == 200
    assert vector.ef_search_for(1_100_000) == 400
    settings.VECTOR_STORE_EF_SEARCH = 700
    assert vector.ef_search_for(1_100_000) == 1000  # pgvector's maximum
    settings.VECTOR_STORE_EF_SEARCH = 200
    add_chunks(make_document(case, "one"), [random_unit()])

    def searched_with(rows: int, **options) -> str:
        with connection.cursor() as cursor:  # as ANALYZE would record a table of that size
            cursor.execute("UPDATE pg_class SET reltuples = %s WHERE oid = 'rag_chunk'::regclass", [rows])
        with CaptureQueriesContext(connection) as queries:
            semantic_search(tenant=case.tenant, query_vector=random_unit(), k=5, **options)
        settings_sql = [q["sql"] for q in queries.captured_queries if "hnsw.ef_search" in q["sql"]]
        return settings_sql[0]

    assert "'hnsw.ef_search', '200'" in searched_with(1_000)
    assert "'hnsw.ef_search', '400'" in searched_with(1_100_000)
    assert "'hnsw.ef_search', '77'" in searched_with(1_100_000, ef_search=77)  # named: kept


def test_search_settings_are_local_to_the_search(case, random_unit):
    add_chunks(make_document(case, "one"), [random_unit()])
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        before = cursor.fetchone()[0]
        semantic_search(tenant=case.tenant, query_vector=random_unit(), k=1, ef_search=77)
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == before
        cursor.execute("SELECT current_setting('hnsw.iterative_scan', true)")
        assert cursor.fetchone()[0] in (None, "off")


def test_one_query_searches_chunks_even_with_metadata_filters(case, random_unit):
    add_chunks(make_document(case, "tagged", metadata={"party": "Acme"}), [random_unit()])
    filters = SearchFilters(metadata={"party": "Acme"}, doc_types=("other",))
    with CaptureQueriesContext(connection) as captured:
        hits = semantic_search(tenant=case.tenant, query_vector=random_unit(), k=3, filters=filters)
    assert len(hits) == 1
    reads = [q["sql"] for q in captured.captured_queries if '"rag_chunk"' in q["sql"]]
    # The filter's row count (is it selective?), then the search: both scoped and filtered in SQL.
    assert len(reads) == 2 and reads[0].startswith("SELECT COUNT(*)")
    for sql in reads:
        assert 'INNER JOIN "rag_document"' in sql and '"rag_chunk"."tenant_id" =' in sql


@pytest.fixture
def chunk_table_locked(db):
    """Another session holds an exclusive lock on the chunk table: searches block until their
    statement timeout cancels them (a real timeout, no mocked database)."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    other = psycopg.connect(**params, autocommit=False)
    try:
        # NOWAIT, retried: never queue behind (and so stall) another test session using the table.
        deadline = time.monotonic() + 15
        while True:
            try:
                other.execute(f"LOCK TABLE {Chunk._meta.db_table} IN ACCESS EXCLUSIVE MODE NOWAIT")
                break
            except psycopg.errors.LockNotAvailable:
                other.rollback()
                if time.monotonic() > deadline:
                    pytest.skip("another session keeps the chunk table busy")
                time.sleep(0.1)
        yield
    finally:
        other.rollback()
        other.close()


def test_a_timeout_is_vector_store_unavailable_and_the_connection_survives(
    tenant, settings, chunk_table_locked, random_unit
):
    settings.VECTOR_STORE_TIMEOUT_SECONDS = 0.2
    for search in (
        lambda: semantic_search(tenant=tenant, query_vector=random_unit(), k=3),
        lambda: keyword_search(tenant=tenant, query="governing law", k=3),
    ):
        started = time.monotonic()
        with pytest.raises(VectorStoreUnavailable) as caught:
            search()
        assert time.monotonic() - started < 3
        assert caught.value.status_code == 503
        assert "canceling statement due to statement timeout" in str(caught.value.__cause__)
    # The failed search rolled back its own savepoint only: the caller's transaction goes on.
    assert tenant.__class__.objects.filter(pk=tenant.pk).exists()
