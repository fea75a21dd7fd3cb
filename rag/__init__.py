"""Retrieval-augmented answering: ingestion, retrieval, the stage pipeline, LLM providers, APIs."""
