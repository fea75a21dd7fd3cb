"""Django's PostgreSQL backend with connection-level retries (ENGINE "ragsite.postgresql").

The database is also the vector store (pgvector), so the service spec's rule applies to it:
connection failures are retried up to VECTOR_STORE_RETRIES times with exponential backoff
(VECTOR_STORE_RETRY_BACKOFF_SECONDS, doubling), then the caller gets a 503. See `retry` for what
counts as a connection failure.
"""
