"""The REST API under /api/v1/rag/: one thin view per operation over services and selectors.

Modules by area: `query` (sync/async queries, jobs, query history), `cases`, `documents`,
`admin_templates` (prompt template CRUD), `admin_ops` (simulate, ranking weights, metrics, audit).
Each module exports `urlpatterns`; `rag.urls` joins them.
"""
