#!/bin/bash
# The db-replica service: a hot standby of $PRIMARY_HOST. The first start copies the primary with
# pg_basebackup (which also writes standby.signal and the connection to stream from); every start
# then serves read-only queries while replaying the primary's WAL.
set -euo pipefail
PGDATA="${PGDATA:-/var/lib/postgresql/18/docker}"
if [ ! -s "${PGDATA}/PG_VERSION" ]; then
    mkdir -p "${PGDATA}"
    chown postgres:postgres "${PGDATA}"
    chmod 700 "${PGDATA}"
    until gosu postgres env PGPASSWORD="${POSTGRES_PASSWORD}" pg_basebackup \
        --host="${PRIMARY_HOST}" --username="${POSTGRES_USER}" --pgdata="${PGDATA}" \
        --wal-method=stream --write-recovery-conf --checkpoint=fast; do
        echo "db-replica: waiting for the primary ${PRIMARY_HOST}" >&2
        find "${PGDATA}" -mindepth 1 -delete
        sleep 2
    done
fi
# hot_standby_feedback: the primary keeps the rows a running search reads, so replaying does not
# cancel it (a cancelled search is run again on the primary, rag/retrieval/replica.py).
exec gosu postgres postgres -D "${PGDATA}" -c hot_standby=on -c hot_standby_feedback=on
