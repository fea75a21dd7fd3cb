"""Claude through the Anthropic Messages API, with the official `anthropic` SDK (2.x).

SDK 2.x speaks API version 2026-10-21, which answers HTTP 400 to any sampling parameter
(temperature, top_p, top_k), even at its default value, and has no argument for one. So
`GenerationRequest.temperature` is not sent: the model samples at its own default, and the
generation's metadata says so.

SDK failures become the application's errors: too slow → `GenerationTimeout`, unreachable,
overloaded, rate-limited or refusing → `LLMUnavailable`, key rejected → `ConfigurationError`.
The API key is handed to the SDK and never logged or put in an error.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

import anthropic
import httpx2
from django.conf import settings

from ragsite.exceptions import ApplicationError, ConfigurationError, GenerationTimeout, LLMUnavailable

from . import cited
from .base import Generation, GenerationRequest, TextStream

logger = logging.getLogger(__name__)

# US dollars per million (input, output) tokens, by model-name prefix; the longest matching prefix wins.
PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "claude-opus-4-0": (15.0, 75.0),
    "claude-opus-4-2025": (15.0, 75.0),  # claude-opus-4-20250514
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
}


def estimate_cost(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """What the tokens cost at `model`'s list price, in US dollars; None for a model not in the table."""
    prefixes = [prefix for prefix in PRICES_PER_MILLION if model.startswith(prefix)]
    if not prefixes:
        return None
    input_price, output_price = PRICES_PER_MILLION[max(prefixes, key=len)]
    return (input_tokens * input_price + output_tokens * output_price) / 1_000_000


def is_message(reply: object) -> bool:
    """Whether the SDK's reply really is a message: without strict validation it turns any 200 body
    (an HTML page from a proxy, `{}`) into an empty object instead of failing."""
    return getattr(reply, "type", None) == "message" and isinstance(getattr(reply, "content", None), list)


class AnthropicProvider:
    """Claude, configured from the ANTHROPIC_* settings. Without ANTHROPIC_API_KEY it refuses to start."""

    name: ClassVar[str] = "anthropic"

    def __init__(self) -> None:
        if not settings.ANTHROPIC_API_KEY:
            raise ConfigurationError(
                "The anthropic provider needs an API key.",
                details={"ANTHROPIC_API_KEY": "Set it to use RAG_LLM_PROVIDER=anthropic."},
            )
        if not settings.ANTHROPIC_MODEL:
            raise ConfigurationError(
                "The anthropic provider needs a model name.",
                details={"ANTHROPIC_MODEL": "Name a Claude model."},
            )
        self.model: str = settings.ANTHROPIC_MODEL
        self.timeout = float(settings.ANTHROPIC_TIMEOUT_SECONDS)
        self._client = anthropic.Anthropic(
            api_key=settings.ANTHROPIC_API_KEY,
            base_url=settings.ANTHROPIC_BASE_URL or None,
            timeout=self.timeout,
            max_retries=int(settings.ANTHROPIC_MAX_RETRIES),
        )

    def generate(self, request: GenerationRequest) -> Generation:
        """Send the prompt as one user message (with `request.system` as the system prompt)."""
        started = time.perf_counter()
        with self._translated_errors():
            message = self._client.messages.create(**self._params(request))
        if not is_message(message):
            logger.warning("anthropic reply is not a message: %.200r", message)
            raise self.translate_error(None)
        usage = getattr(message, "usage", None)
        if request.sources_attached:
            reply = cited.CitedReply.of_message(message.content, request.sources)
            text = reply.as_output(request.follow_up_count)
        else:
            text = "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
        return self._generation(
            text,
            started,
            model=getattr(message, "model", None),
            message_id=getattr(message, "id", None),
            stop_reason=getattr(message, "stop_reason", None),
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
        )

    def stream(self, request: GenerationRequest) -> TextStream:
        """`generate` streamed (the Messages API's server-sent events): `message_start` gives the
        model and input tokens, each `content_block_delta` with a `text_delta` a piece of text
        (yielded), `message_delta` the stop reason and output tokens, `message_stop` the end.
        Closing the generator closes the HTTP response, which stops Claude generating. Raises what
        `generate` raises; an `error` event or a stream without `message_stop` is `LLMUnavailable`."""
        started = time.perf_counter()
        pieces: list[str] = []
        seen: dict = {}
        reply = cited.CitedReply(request.sources) if request.sources_attached else None
        draft = cited.Draft() if reply is not None else None
        with self._translated_errors():
            events = self._client.messages.create(**self._params(request), stream=True)
        try:
            with self._translated_errors():
                for event in events:
                    text = _read_event(event, seen, reply)
                    if text:
                        pieces.append(text)
                        shown = draft.feed(text) if draft is not None else text
                        if shown:
                            yield shown
            if draft is not None and (rest := draft.flush()):
                yield rest
        finally:
            events.close()
        if not seen.get("stopped"):
            raise LLMUnavailable(
                "The Anthropic API's stream ended before message_stop.",
                details={"provider": self.name, "model": self.model},
            )
        del seen["stopped"]
        text = "".join(pieces) if reply is None else reply.as_output(request.follow_up_count)
        return self._generation(text, started, **seen)

    def forced_tool_input(self, *, system: str, content: str, tool: dict, max_tokens: int) -> dict:
        """Claude's input to `tool` (Anthropic's tool format), which the request obliges it to call:
        a structured reply. A reply without that call is `LLMUnavailable`, like one that cannot be
        read."""
        with self._translated_errors():
            message = self._client.messages.create(
                model=self.model,
                system=system,
                messages=[{"role": "user", "content": content}],
                tools=[tool],
                tool_choice={"type": "tool", "name": tool["name"]},
                max_tokens=max_tokens,
            )
        if is_message(message):
            for block in message.content:
                if getattr(block, "type", "") == "tool_use" and getattr(block, "name", "") == tool["name"]:
                    data = getattr(block, "input", None)
                    if isinstance(data, dict):
                        return data
        logger.warning("anthropic reply has no %s call", tool["name"])
        raise self.translate_error(None)

    def _params(self, request: GenerationRequest) -> dict:
        content: str | list[dict] = request.prompt
        if request.sources_attached:  # the passages as search results Claude cites (rag.llm.cited)
            blocks = cited.search_result_blocks(request.sources, request.flagged)
            content = [*blocks, {"type": "text", "text": request.prompt}]
        return {
            "model": self.model,
            "system": request.system or anthropic.omit,
            "messages": [{"role": "user", "content": content}],
            "max_tokens": request.max_tokens,
        }

    @contextmanager
    def _translated_errors(self) -> Iterator[None]:
        """SDK (and, mid-stream, transport) failures as the application's errors."""
        try:
            yield
        except (anthropic.AnthropicError, json.JSONDecodeError, httpx2.TransportError) as exc:
            error = self.translate_error(exc)
            logger.warning(
                "anthropic generation failed: %s", type(exc).__name__, extra={"details": error.details}
            )
            raise error from exc

    def _generation(
        self,
        text: str,
        started: float,
        *,
        model: str | None = None,
        message_id: str | None = None,
        stop_reason: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> Generation:
        model = model or self.model
        input_tokens, output_tokens = input_tokens or 0, output_tokens or 0
        metadata = {
            "message_id": message_id,
            "stop_reason": stop_reason,
            "temperature": "not sent: API version 2026-10-21 accepts no sampling parameters",
        }
        cost = estimate_cost(model, input_tokens, output_tokens)
        if cost is None:
            metadata["cost_note"] = f"No price known for model {model!r}; cost_estimate is 0."
        return Generation(
            text=text,
            provider=self.name,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_estimate=cost or 0.0,
            latency_ms=(time.perf_counter() - started) * 1000,
            metadata=metadata,
            truncated=stop_reason == "max_tokens",
        )

    def translate_error(self, exc: Exception | None) -> ApplicationError:
        """The application error for an SDK failure (the SDK has already retried what it retries);
        `exc` is None (or not the SDK's) for a reply that is not a message."""
        details: dict = {"provider": self.name, "model": self.model}
        if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
            details["timeout_seconds"] = self.timeout
            return GenerationTimeout(f"Claude did not answer within {self.timeout:g} s.", details=details)
        if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
            return LLMUnavailable("Could not reach the Anthropic API.", details=details)
        if not isinstance(exc, anthropic.APIStatusError):
            return LLMUnavailable("The Anthropic API sent a reply that could not be read.", details=details)

        details["status"] = exc.status_code
        if getattr(exc, "type", None):
            details["error_type"] = exc.type
        if getattr(exc, "request_id", None):
            details["request_id"] = exc.request_id
        if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
            details["ANTHROPIC_API_KEY"] = f"Rejected by the Anthropic API (HTTP {exc.status_code})."
            return ConfigurationError("The Anthropic API refused the configured API key.", details=details)
        if isinstance(exc, anthropic.OverloadedError) or details.get("error_type") == "overloaded_error":
            return LLMUnavailable("Claude is overloaded. Please try again.", details=details)
        if isinstance(exc, anthropic.RateLimitError):
            return LLMUnavailable(
                "The Anthropic API rate limit was reached. Please try again.", details=details
            )
        if isinstance(exc, anthropic.InternalServerError) or exc.status_code >= 500:
            return LLMUnavailable(f"The Anthropic API failed (HTTP {exc.status_code}).", details=details)
        return LLMUnavailable(
            f"The Anthropic API refused the request (HTTP {exc.status_code}).", details=details
        )


def _read_event(event, seen: dict, reply: cited.CitedReply | None = None) -> str:
    """The text a streamed event adds (""), noting in `seen` what `message_start`, `message_delta`
    and `message_stop` say. With `reply` (sources sent as search results), text and citations are
    gathered there too, and a cited block's markers are streamed when the block ends."""
    kind = getattr(event, "type", None)
    delta_kind = getattr(getattr(event, "delta", None), "type", None)
    if kind == "content_block_delta" and delta_kind == "text_delta":
        if reply is not None:
            reply.add_text(event.index, event.delta.text)
        return event.delta.text
    if reply is not None and kind == "content_block_delta" and delta_kind == "citations_delta":
        reply.add_citation(event.index, event.delta.citation)
    if reply is not None and kind == "content_block_stop":
        return reply.markers(event.index)
    if kind == "message_start":
        usage = getattr(event.message, "usage", None)
        seen.update(
            model=getattr(event.message, "model", None),
            message_id=getattr(event.message, "id", None),
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
        )
    elif kind == "message_delta":
        seen["stop_reason"] = getattr(event.delta, "stop_reason", None)
        seen["output_tokens"] = getattr(getattr(event, "usage", None), "output_tokens", None)
    elif kind == "message_stop":
        seen["stopped"] = True
    return ""
