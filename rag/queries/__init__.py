"""Asking questions on behalf of a caller: synchronous runs, background query jobs (with
idempotency keys) and each caller's query history."""
