"""Search on a real streaming replica, with its replay paused to make it lag on purpose.

Run by tests/ragsite/test_read_replica.py in a process of its own: DATABASE_URL names a fresh
embedded primary, DATABASE_REPLICA_URLS its hot standby (ragsite.embedded_pg.server.ensure_replica),
REPLICA_DATA_DIR the standby's data (to stop it at the end). Prints one JSON object of what it saw.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragsite.settings.test")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402

from rag import selectors  # noqa: E402
from rag import services as rag_services  # noqa: E402
from rag.ingest import embedding  # noqa: E402
from rag.ingest import service as ingest  # noqa: E402
from rag.models import Document, Sensitivity  # noqa: E402
from rag.retrieval import SearchFilters, replica  # noqa: E402
from rag.retrieval.hybrid import hybrid_search  # noqa: E402
from rag.retrieval.service import Reader, reader_visibility, retrieve  # noqa: E402
from ragsite.db_routers import reading_from  # noqa: E402
from ragsite.embedded_pg import server  # noqa: E402
from tenants.services import tenant_create  # noqa: E402

REPLICA = "replica_1"
QUESTION = "Which state's laws govern?"
LEASE = (
    "COMMERCIAL LEASE\n\nThis Lease is made between Harbor Holdings and Pier Cafe.\n\n"
    "12. Governing Law. This Lease shall be governed by the laws of the State of Oregon.\n"
)
SUPPLY = (
    "SUPPLY AGREEMENT\n\nThis Agreement is made between Northwind Foods and Pier Cafe.\n\n"
    "9. Governing Law. This Agreement shall be governed by the laws of the State of Nevada.\n"
)
LICENSE = (
    "SOFTWARE LICENSE\n\nThis License is made between Quill Software and Pier Cafe.\n\n"
    "7. Governing Law. This License shall be governed by the laws of the State of Vermont.\n"
)
SERVICES = (
    "SERVICES AGREEMENT\n\nThis Agreement is made between Quill Software and Bay Bank.\n\n"
    "5. Governing Law. This Agreement shall be governed by the laws of the State of Maine.\n"
)


class Counter:
    """Counts the statements a connection runs (a real execute wrapper, nothing replaced)."""

    def __init__(self):
        self.statements = 0

    def __call__(self, execute, sql, params, many, context):
        self.statements += 1
        return execute(sql, params, many, context)


def replica_sql(sql: str, params=()):
    with connections[REPLICA].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def wait_until_replayed(tenant) -> None:
    """Until the replica holds the primary's corpus version of `tenant`."""
    want = selectors.index_version_get(tenant=tenant)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with reading_from(REPLICA):
            got = selectors.index_version_get(tenant=tenant)
        if got == want:
            return
        time.sleep(0.05)
    raise SystemExit(f"the replica did not replay version {want} of tenant {tenant.pk}")


def cited(tenant, reader: Reader | None = None) -> list[str]:
    """The file names of the documents a reader's search returns passages of."""
    result = retrieve(
        tenant=tenant, query=QUESTION, top_k=5, reader=reader or Reader(), routing_enabled=False
    )
    ids = {passage.document_id for passage in result.passages}
    return sorted(Document.objects.filter(pk__in=ids).values_list("original_filename", flat=True))


def look(seen: dict, name: str, counter: Counter, tenant) -> None:
    """Search as a reader without confidential access; record the files cited and how many
    statements the replica ran meanwhile."""
    before = counter.statements
    seen[f"{name}_files"] = cited(tenant)
    seen[f"{name}_replica_statements"] = counter.statements - before


def main() -> int:
    call_command("migrate", verbosity=0)
    firm = tenant_create(slug="harbor", name="Harbor LLP")
    other = tenant_create(slug="quill", name="Quill LLP")
    case = rag_services.case_create(tenant=firm, name="Pier Cafe leases")
    other_case = rag_services.case_create(tenant=other, name="Licences")
    for tenant, where, name, text in (
        (firm, case, "lease.txt", LEASE),
        (firm, case, "supply.txt", SUPPLY),
        (other, other_case, "license.txt", LICENSE),
        (other, other_case, "services.txt", SERVICES),
    ):
        outcome = ingest.ingest_now(tenant=tenant, case=where, filename=name, content=text.encode())
        assert outcome.status == "ok", outcome
    wait_until_replayed(firm)
    wait_until_replayed(other)
    counter = Counter()
    seen: dict[str, object] = {}
    with connections[REPLICA].execute_wrapper(counter):
        # 1. Caught up: the scans run on the replica.
        look(seen, "fresh", counter, firm)

        # 2. The replica stops replaying; the primary makes the lease confidential.
        replica_sql("SELECT pg_wal_replay_pause()")
        while replica_sql("SELECT pg_get_wal_replay_pause_state()")[0] != "paused":
            time.sleep(0.01)
        lease = Document.objects.get(tenant=firm, original_filename="lease.txt")
        lease.sensitivity = Sensitivity.CONFIDENTIAL
        lease.save()
        time.sleep(0.5)  # long enough for a replaying standby to have applied it
        seen["replica_not_confidential"] = (
            replica_sql("SELECT sensitivity FROM rag_document WHERE id = %s", [lease.pk])[0]
            != Sensitivity.CONFIDENTIAL
        )
        # The replica is behind for this firm: the scans run on the primary, the lease is left out.
        look(seen, "behind", counter, firm)
        # A firm the replica is not behind on is still searched there.
        look(seen, "other", counter, other)

        # 3. Even a scan that did read the stale copy shows nothing the primary withholds now.
        visible = SearchFilters().seen_by(reader_visibility(tenant=firm, reader=Reader()))
        vector = embedding.embed([QUESTION])[0]
        with reading_from(REPLICA):
            stale = hybrid_search(tenant=firm, query=QUESTION, k=10, filters=visible, query_vector=vector)
        stale_documents = {hit.document_id for hit in stale}
        confirmed = replica.confirmed_on_primary(stale, tenant=firm, filters=visible)
        seen["stale_scan_had_lease"] = lease.pk in stale_documents
        seen["confirmed_has_lease"] = lease.pk in {hit.document_id for hit in confirmed}
        seen["confirmed_kept_others"] = bool(confirmed)

        # 4. Replay resumes: the firm is searched on the replica again, still without the lease.
        replica_sql("SELECT pg_wal_replay_resume()")
        wait_until_replayed(firm)
        look(seen, "resumed", counter, firm)

    # 5. The replica goes down: searches carry on, on the primary.
    connections[REPLICA].close()
    server.stop(Path(os.environ["REPLICA_DATA_DIR"]))
    seen["down_files"] = cited(other)
    seen["down_set_aside"] = replica._set_aside_now(REPLICA)
    print(json.dumps(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
