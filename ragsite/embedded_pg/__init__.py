"""Django database backend and process manager for the bundled PostgreSQL + pgvector server."""
