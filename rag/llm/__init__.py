"""Model providers: the offline extractive default, Claude (anthropic) and Ollama."""

from .base import Finding, Generation, GenerationRequest, LLMProvider, Source, get_provider

__all__ = ["Finding", "Generation", "GenerationRequest", "LLMProvider", "Source", "get_provider"]
