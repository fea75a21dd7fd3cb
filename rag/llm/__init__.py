"""Model providers: the offline extractive default, Claude (anthropic) and Ollama."""

from .base import Generation, GenerationRequest, LLMProvider, Source, get_provider

__all__ = ["Generation", "GenerationRequest", "LLMProvider", "Source", "get_provider"]
