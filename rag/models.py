"""Tenant-scoped research data. Cases, documents and pgvector chunks arrive with ingestion."""
