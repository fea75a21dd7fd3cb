"""Document ingestion: extraction, normalization, chunking, embedding."""
