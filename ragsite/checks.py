"""System checks for settings that must hold together (run by manage.py check, migrate, serve)."""

import os

from django.conf import settings
from django.core.checks import Error, Warning, register

CHOICES = {
    "VECTOR_DB": ("pgvector",),
    "RAG_LLM_PROVIDER": ("extractive", "anthropic", "ollama"),
    "RAG_INJECTION_POLICY": ("flag", "reject"),
    "RAG_CACHE_BACKEND": ("redis", "memory"),
    "RAG_CHUNKING": ("fixed", "adaptive"),
    "EMBEDDING_PRECISION": ("auto", "fp32", "bf16"),
    "LOG_FORMAT": ("json", "text"),
    "RAG_REVIEW_VERIFIER": ("", "anthropic", "ollama"),
}


@register()
def check_rag_settings(app_configs=None, **kwargs):
    errors = []
    for name, allowed in CHOICES.items():
        value = getattr(settings, name)
        if value not in allowed:
            errors.append(
                Error(
                    f"{name}={value!r} is not supported",
                    hint=f"Use one of {', '.join(allowed)}.",
                    id="lexrag.E001",
                )
            )
    if settings.RAG_CHUNK_SIZE < 50 or not 0 <= settings.RAG_CHUNK_OVERLAP < settings.RAG_CHUNK_SIZE:
        errors.append(
            Error(
                "RAG_CHUNK_SIZE must be >= 50 and RAG_CHUNK_OVERLAP >= 0 and smaller than it",
                id="lexrag.E002",
            )
        )
    weights = (settings.RAG_SIMILARITY_WEIGHT, settings.RAG_RECENCY_WEIGHT, settings.RAG_TRUST_WEIGHT)
    if min(weights) < 0 or sum(weights) <= 0:
        errors.append(Error("ranking weights must be non-negative and not all zero", id="lexrag.E003"))
    if settings.RAG_LLM_PROVIDER == "anthropic" and not settings.ANTHROPIC_API_KEY:
        errors.append(Error("RAG_LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY", id="lexrag.E004"))
    if settings.RAG_REVIEW_VERIFIER == "anthropic" and not settings.ANTHROPIC_API_KEY:
        errors.append(Error("RAG_REVIEW_VERIFIER=anthropic needs ANTHROPIC_API_KEY", id="lexrag.E005"))
    return errors


# Variables the specs name for a store or a knob Lexrag does not have, and why they are not read.
UNREAD_SPEC_VARIABLES = {
    "VECTOR_STORE_URL": "vectors live in the application's PostgreSQL (pgvector), not in ChromaDB",
    "VECTOR_STORE_COLLECTION": "chunks and their vectors are the rag_chunk table, not a collection",
    "MILVUS_HOST": "VECTOR_DB is pgvector; Milvus is not supported",
    "MILVUS_PORT": "VECTOR_DB is pgvector; Milvus is not supported",
    "DEFAULT_TOP_K": (
        "passages in an answer are RAG_DEFAULT_TOP_K; candidates per search leg are RAG_CANDIDATE_POOL"
    ),
}


@register()
def check_unread_spec_variables(app_configs=None, **kwargs):
    """A warning for each spec variable set in the environment that Lexrag does not read, so an
    operator copying the spec's configuration learns it has no effect instead of trusting it."""
    return [
        Warning(
            f"{name} is set but not read: {reason}",
            hint="Unset it; see docs/spec-differences.md.",
            id="lexrag.W001",
        )
        for name, reason in UNREAD_SPEC_VARIABLES.items()
        if name in os.environ
    ]
