#!/bin/bash
# Run once by the db image as it initialises a new volume (/docker-entrypoint-initdb.d): let the
# replica stream the WAL as the application's user (a superuser in this image; a dedicated role
# with REPLICATION is better where the primary is managed by hand, docs/deployment.md).
set -euo pipefail
echo "host replication ${POSTGRES_USER} all scram-sha-256" >> "${PGDATA}/pg_hba.conf"
