"""Document frequencies of a tenant's full-text lexemes, for keyword search's idf weights.

PostgreSQL's full-text ranking (`ts_rank_cd`) knows nothing of how common a word is in the corpus,
so "agreement" would count as much as "indemnify". `ts_stat` over the tenant's chunks gives each
lexeme's document frequency; it is computed once per tenant and corpus version and kept in this
process. After an upload the previous statistics stay in use for up to `MAX_STALE_SECONDS`: one
document barely moves the frequencies, and the statistics of a large corpus take a while to build.

A tenant of more than SAMPLE_CHUNKS chunks is read from a sample of about that many (PostgreSQL's
page sampling, seeded, so every process and every build of the same table state gets the same
sample), each frequency scaled up by the sampled share: `ts_stat` reads every lexeme of every chunk
it is given, about 15 µs a chunk here, so a million chunks took longer than a search's statement
timeout and keyword search failed outright (bench/README.md, 1M passages). An idf needs to know a
word's order of magnitude, not its last occurrence: a word the sample misses is rare, and is
weighted as rare.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from django.db import connection

from rag.models import Chunk
from ragsite.db_routers import read_connection
from tenants.models import Tenant

MAX_STALE_SECONDS = 60.0
SAMPLE_CHUNKS = 50_000  # about 0.75 s of ts_stat on this machine
SAMPLE_SEED = 37
_CACHE_TENANTS = 16


@dataclass(frozen=True)
class TermStats:
    """How many chunks a tenant has, and in how many of them each lexeme occurs."""

    chunks: int
    document_frequency: dict[str, int]

    def df(self, lexeme: str) -> int:
        """Chunks containing `lexeme` (0 when unseen, e.g. uploaded after these statistics)."""
        return self.document_frequency.get(lexeme, 0)

    def idf(self, lexeme: str) -> float:
        """BM25's inverse document frequency, ln(1 + (N - df + 0.5) / (df + 0.5)): always > 0,
        highest for lexemes no chunk contains."""
        df = min(self.df(lexeme), self.chunks)
        return math.log(1.0 + (self.chunks - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class _Entry:
    index_version: int
    stats: TermStats
    built_at: float


_cache: OrderedDict[int, _Entry] = OrderedDict()
_cache_lock = threading.Lock()


def term_stats(*, tenant: Tenant, index_version: int) -> TermStats:
    """The tenant's lexeme statistics for corpus version `index_version` (possibly up to
    MAX_STALE_SECONDS older). Runs inside the caller's search session when there is one."""
    now = time.monotonic()
    with _cache_lock:
        entry = _cache.get(tenant.pk)
        if entry is not None and (
            entry.index_version == index_version or now - entry.built_at < MAX_STALE_SECONDS
        ):
            _cache.move_to_end(tenant.pk)
            return entry.stats
    stats = _build(tenant)
    with _cache_lock:
        _cache[tenant.pk] = _Entry(index_version, stats, time.monotonic())
        _cache.move_to_end(tenant.pk)
        while len(_cache) > _CACHE_TENANTS:
            _cache.popitem(last=False)
    return stats


def clear_cache() -> None:
    """Forget every tenant's statistics (tests; a process never needs it)."""
    with _cache_lock:
        _cache.clear()


def _build(tenant: Tenant) -> TermStats:
    table = connection.ops.quote_name(Chunk._meta.db_table)
    with read_connection().cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table} WHERE tenant_id = %s", [tenant.pk])  # noqa: S608
        (count,) = cursor.fetchone()
        share = sampled_share(count)
        sample = f" TABLESAMPLE SYSTEM ({share * 100:.6f}) REPEATABLE ({SAMPLE_SEED})" if share < 1 else ""
        # ts_stat takes its input as SQL text; the tenant id is an integer, so it is formatted in.
        chunks_sql = f"SELECT search_vector FROM {table}{sample} WHERE tenant_id = {int(tenant.pk)}"  # noqa: S608
        cursor.execute("SELECT word, ndoc FROM ts_stat(%s)", [chunks_sql])
        rows = cursor.fetchall()
    return TermStats(chunks=count, document_frequency={word: round(ndoc / share) for word, ndoc in rows})


def sampled_share(tenant_chunks: int) -> float:
    """The share of the table's pages to read for about SAMPLE_CHUNKS of the tenant's chunks (1:
    all of them). Page sampling happens before the tenant's WHERE clause, so the share is of
    the tenant's chunks, whatever else the table holds."""
    if tenant_chunks <= SAMPLE_CHUNKS:
        return 1.0
    return SAMPLE_CHUNKS / tenant_chunks
