"""/api/v1/rag/: the research API (see rag.api)."""

from rag.api import admin_ops, admin_templates, cases, documents, exports, query, review_tables

urlpatterns = [
    *query.urlpatterns,
    *exports.urlpatterns,
    *cases.urlpatterns,
    *documents.urlpatterns,
    *review_tables.urlpatterns,
    *admin_templates.urlpatterns,
    *admin_ops.urlpatterns,
]
