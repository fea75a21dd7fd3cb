"""A local Ollama server, over its native HTTP API with the standard library only.

One `POST {OLLAMA_HOST}/api/generate` per answer: non-streaming for `generate`; for `stream`,
with `"stream": true`, the reply comes as NDJSON lines, each with a piece of "response" text, the
last with `"done": true` and the token counts (a line with "error" is Ollama failing mid-way).
Closing the stream closes the connection, which stops Ollama generating. A connection that cannot be made
(refused, reset, dropped, or not made within the timeout) is tried once more, then the model is
`OllamaUnavailable` (an `LLMUnavailable`, 503); a reply slower than OLLAMA_TIMEOUT_SECONDS is a
`GenerationTimeout` and is not retried (the model would only be asked to do the slow work again).
A missing model (HTTP 404), any other HTTP error and a reply without "response" text are
`OllamaUnavailable`. Local generation is free.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from django.conf import settings

from ragsite.exceptions import ApplicationError, ConfigurationError, GenerationTimeout, OllamaUnavailable

from .base import Generation, GenerationRequest, TextStream
from .overrides import ollama_host

logger = logging.getLogger(__name__)

TOP_P = 0.9
CONNECT_ATTEMPTS = 2


class OllamaProvider:
    """A model served by Ollama, configured from OLLAMA_HOST (or the calling service's
    `ollama_host`, see rag.llm.overrides), OLLAMA_MODEL and OLLAMA_TIMEOUT_SECONDS."""

    name: ClassVar[str] = "ollama"

    def __init__(self) -> None:
        host = ollama_host().strip().rstrip("/")
        parts = urllib.parse.urlsplit(host)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigurationError(
                "OLLAMA_HOST is not an http(s) URL.",
                details={"OLLAMA_HOST": "The server's URL, such as http://ollama:11434."},
            )
        if not settings.OLLAMA_MODEL:
            raise ConfigurationError(
                "The ollama provider needs a model name.", details={"OLLAMA_MODEL": "Such as mistral:7b."}
            )
        self.host = host
        self.url = f"{host}/api/generate"
        self.model: str = settings.OLLAMA_MODEL
        self.timeout = float(settings.OLLAMA_TIMEOUT_SECONDS)

    def generate(self, request: GenerationRequest) -> Generation:
        """Ask Ollama for one complete (non-streamed) answer to `request`."""
        started = time.perf_counter()
        reply = self._parse(self._post(self._payload(request, stream=False)))
        return self._generation(reply, reply["response"], started)

    def stream(self, request: GenerationRequest) -> TextStream:
        """Ask Ollama for the answer to `request` streamed: yields its text as Ollama writes it and
        returns the Generation (counts from the last line). Raises what `generate` raises, and
        `OllamaUnavailable` for a stream that ends without its "done" line or reports an error."""
        started = time.perf_counter()
        pieces, last = [], None
        response = self._open(self._payload(request, stream=True))
        try:
            with self._reading():
                for line in response:
                    if not line.strip():
                        continue
                    part = self._parse(line, streamed=True)
                    pieces.append(part["response"])
                    if part["response"]:
                        yield part["response"]
                    if part.get("done"):
                        last = part
                        break
        finally:
            response.close()  # before the last line: the client went away, Ollama stops generating
        if last is None:
            raise OllamaUnavailable("Ollama's stream ended before its last line.", details=self._details())
        return self._generation(last, "".join(pieces), started)

    def structured_output(self, *, system: str, prompt: str, schema: dict, max_tokens: int) -> dict:
        """Ollama's reply to `prompt` as the JSON object `schema` describes (its structured
        outputs: the schema as the request's "format"), at temperature 0. A reply that is not
        such an object is `OllamaUnavailable`."""
        payload = {
            "model": self.model,
            "system": system,
            "prompt": prompt,
            "stream": False,
            "format": schema,
            "options": {"temperature": 0, "num_predict": max_tokens},
        }
        reply = self._parse(self._post(json.dumps(payload).encode()))
        try:
            data = json.loads(reply["response"])
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise OllamaUnavailable(
                "Ollama's reply is not the JSON object asked for.", details=self._details()
            )
        return data

    def _payload(self, request: GenerationRequest, *, stream: bool) -> bytes:
        payload = {
            "model": self.model,
            "prompt": request.prompt,
            "stream": stream,
            "options": {
                "temperature": request.temperature,
                "top_p": TOP_P,
                "num_predict": request.max_tokens,
            },
        }
        if request.system:
            payload["system"] = request.system
        return json.dumps(payload).encode()

    def _generation(self, reply: dict, text: str, started: float) -> Generation:
        """The Generation of `text`, with the counts and metadata of `reply` (the last line)."""
        return Generation(
            text=text,
            provider=self.name,
            model=reply.get("model") or self.model,
            input_tokens=_count(reply, "prompt_eval_count"),
            output_tokens=_count(reply, "eval_count"),
            cost_estimate=0.0,
            latency_ms=(time.perf_counter() - started) * 1000,
            metadata={"done_reason": reply.get("done_reason"), "created_at": reply.get("created_at")},
            truncated=reply.get("done_reason") == "length",
        )

    def ping(self, timeout: float = 2.0) -> bool:
        """Whether the Ollama server answers (GET /api/tags), for health checks."""
        try:
            with urllib.request.urlopen(f"{self.host}/api/tags", timeout=timeout) as response:  # noqa: S310
                return response.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def _post(self, body: bytes) -> bytes:
        """The reply body of a successful POST, after at most one retry of a failed connection."""
        with self._open(body) as response, self._reading():
            return response.read()

    def _open(self, body: bytes) -> http.client.HTTPResponse:
        """The response to a POST of `body` whose status was 2xx, its body still to read, after
        at most one retry of a failed connection."""
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            http_request = urllib.request.Request(  # noqa: S310  (scheme checked in __init__)
                self.url, data=body, headers={"Content-Type": "application/json"}, method="POST"
            )
            try:
                return urllib.request.urlopen(http_request, timeout=self.timeout)  # noqa: S310
            except urllib.error.HTTPError as exc:
                raise self._http_error(exc) from exc
            except TimeoutError as exc:  # connected and sent, but the answer is too slow
                raise self._timeout() from exc
            except (
                urllib.error.URLError,
                ConnectionError,
            ) as exc:  # refused, reset, dropped, connect timeout
                reason = getattr(exc, "reason", exc)
                if attempt < CONNECT_ATTEMPTS:
                    logger.warning("ollama connection failed (%s); retrying once", reason)
                    continue
                logger.warning("ollama unreachable at %s: %s", self.host, reason)
                raise OllamaUnavailable(
                    f"Could not reach Ollama at {self.host}.", details=self._details(reason=str(reason))
                ) from exc
            except http.client.HTTPException as exc:
                raise self._malformed(exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Failures while reading a reply's body, as the application's errors."""
        try:
            yield
        except TimeoutError as exc:
            raise self._timeout() from exc
        except ConnectionError as exc:
            raise OllamaUnavailable(
                "Ollama dropped the connection mid-reply.", details=self._details(reason=repr(exc))
            ) from exc
        except http.client.HTTPException as exc:
            raise self._malformed(exc) from exc

    def _timeout(self) -> GenerationTimeout:
        return GenerationTimeout(
            f"Ollama did not answer within {self.timeout:g} s.",
            details=self._details(timeout_seconds=self.timeout),
        )

    def _malformed(self, exc: Exception) -> OllamaUnavailable:
        details = self._details(reason=repr(exc))
        return OllamaUnavailable("Ollama sent a malformed HTTP reply.", details=details)

    def _http_error(self, exc: urllib.error.HTTPError) -> ApplicationError:
        """OllamaUnavailable for a non-2xx reply, naming the model when Ollama does not have it (404)."""
        try:
            body = exc.read().decode("utf-8", "replace")
            error_text = str(json.loads(body).get("error", body))
        except (OSError, ValueError, AttributeError):
            error_text = exc.reason if isinstance(exc.reason, str) else ""
        details = self._details(status=exc.code, error=error_text[:300])
        logger.warning("ollama answered HTTP %s: %s", exc.code, error_text[:300])
        if exc.code == 404:
            return OllamaUnavailable(
                f"Ollama has no model {self.model!r} (pull it with `ollama pull {self.model}`).",
                details=details,
            )
        return OllamaUnavailable(f"Ollama answered HTTP {exc.code}.", details=details)

    def _parse(self, raw: bytes, *, streamed: bool = False) -> dict:
        """The reply (or, `streamed`, one line of it) as a dict with "response" text, or
        OllamaUnavailable (also for a line reporting an error)."""
        try:
            reply = json.loads(raw)
        except ValueError as exc:
            raise OllamaUnavailable("Ollama's reply is not JSON.", details=self._details()) from exc
        if streamed and isinstance(reply, dict) and "error" in reply:
            error = str(reply["error"])[:300]
            logger.warning("ollama failed mid-stream: %s", error)
            raise OllamaUnavailable("Ollama failed while answering.", details=self._details(error=error))
        if not isinstance(reply, dict) or not isinstance(reply.get("response"), str):
            raise OllamaUnavailable('Ollama\'s reply has no "response" text.', details=self._details())
        return reply

    def _details(self, **extra) -> dict:
        return {"provider": self.name, "model": self.model, **extra}


def _count(reply: dict, key: str) -> int:
    """A token count from the reply; 0 when Ollama left it out (e.g. a prompt it had cached)."""
    value = reply.get(key)
    return value if isinstance(value, int) and value >= 0 else 0
