"""Settings of the processes the fault tests start (web app, Celery workers, seeding).

The test settings, with the recovery timings shortened so a lost worker is noticed in seconds
rather than minutes. Everything else (database, Redis) comes from the environment the tests set.
"""

from ragsite.settings.test import *  # noqa: F403

# Ingestion: a heartbeat every half second; a document silent for 3 s has lost its worker.
RAG_INGEST_HEARTBEAT_SECONDS = 0.5
RAG_INGEST_STALL_SECONDS = 3
# A worker looks for lost work (and marks itself alive for 5 s) every second.
RAG_RECOVERY_SWEEP_SECONDS = 1
# Query jobs: the hard limit 2 s after the soft one, and 2 s more before a job counts as lost.
RAG_QUERY_JOB_HARD_LIMIT_MARGIN_SECONDS = 2
RAG_QUERY_JOB_LOST_GRACE_SECONDS = 2
