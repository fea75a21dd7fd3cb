"""Search whose database connection is lost is run again on a new connection (spec: retry up to
3 times with exponential backoff), never inside a caller's transaction; then 503."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from rag.retrieval import service as retrieval
from ragsite.exceptions import VectorStoreUnavailable

QUESTION = "How long do the confidentiality obligations survive termination?"
NDA = (
    "Mutual Non-Disclosure Agreement between Acme Corp and Globex Inc.\n\n"
    "Term. The obligations of confidentiality survive termination of this Agreement for five years."
)


def chunk_ids(found) -> list[int]:
    return [candidate.hit.chunk_id for candidate in found.candidates]


@pytest.fixture
def indexed(case, ingest_text, default_db_through):
    """The NDA indexed (committed), with the default connection through the proxy."""
    return ingest_text(case, NDA, filename="nda.txt", title="Mutual NDA")


def test_a_connection_lost_before_a_search_is_retried_on_a_new_one(tenant, indexed, default_db_through):
    found = retrieval.search(tenant=tenant, query=QUESTION)
    assert found.candidates
    before = default_db_through.accepted
    default_db_through.sever()  # the open connection dies, as in a server restart
    again = retrieval.search(tenant=tenant, query=QUESTION)
    assert chunk_ids(again) == chunk_ids(found)
    assert default_db_through.accepted == before + 1  # one new connection


def test_a_connection_that_stays_lost_is_503_after_three_retries(
    tenant, indexed, default_db_through, settings
):
    settings.VECTOR_STORE_RETRY_BACKOFF_SECONDS = 0.01
    settings.VECTOR_STORE_RETRIES = 3
    retrieval.search(tenant=tenant, query=QUESTION)
    before = default_db_through.accepted
    default_db_through.sever()
    default_db_through.drop_first = 100  # and every new connection is dropped too
    with pytest.raises(VectorStoreUnavailable):
        retrieval.search(tenant=tenant, query=QUESTION)
    # Three reconnections, each connecting with its own three retries.
    assert default_db_through.accepted - before == 3 * 4


def test_a_lost_connection_inside_a_transaction_is_not_retried(tenant, indexed, default_db_through):
    retrieval.search(tenant=tenant, query=QUESTION)
    before = default_db_through.accepted
    with pytest.raises(VectorStoreUnavailable), transaction.atomic():
        default_db_through.sever()
        try:
            retrieval.search(tenant=tenant, query=QUESTION)
        finally:  # (leaving the block, Django reconnects for the next statement: not a retry)
            during_search = default_db_through.accepted
    assert during_search == before  # no new connection: the transaction could not go on there
    connection.close()
