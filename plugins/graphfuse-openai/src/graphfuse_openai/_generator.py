"""The OpenAI chat-completions generator (``/v1/chat/completions``) for :mod:`graphfuse.compare`."""

from __future__ import annotations

import asyncio
import math
import os
import time
from typing import Any
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletion

from graphfuse import ConnectionFailed, InvalidInput, RequestTimedOut
from graphfuse.compare import ContextWindowExceeded, Generation, check_messages, count_messages, default_counter
from graphfuse.providers import api_key as resolve_api_key
from graphfuse.retry import RetryPolicy, attempt_timeout, call_with_retry, error_for_status

__all__ = ["OpenAIGenerator"]

_DEFAULT_RETRY = RetryPolicy()
OPENAI_URL = "https://api.openai.com/v1"
# Sent as the key to a server that asks for none (llama.cpp's server, Ollama, vLLM without --api-key).
NO_KEY = "sk-no-key-required"
# Concurrency for OpenAI's API, where slots are not a limit (rate limits are retried).
_OPENAI_CONCURRENCY = 4
# Context windows of common models (tokens); pass context_window= for any other.
_WINDOWS = {
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-3.5-turbo": 16_385,
}


def _positive(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise InvalidInput(f"{name} must be a positive number, got {value!r}")


class OpenAIGenerator:
    """Answers chat messages with OpenAI's chat-completions API through the official ``openai`` SDK.

    - ``model``: the chat model (default ``gpt-4o-mini``).
    - ``api_key``: defaults to ``OPENAI_API_KEY``; ``base_url``: the API root with ``/v1``
      (default ``OPENAI_BASE_URL``, else OpenAI's): any server speaking the chat-completions
      API works (vLLM, llama.cpp, Ollama's OpenAI endpoint). Such a server needs no key:
      without one, a placeholder is sent. :attr:`endpoint` is the URL used and every error
      message names it.
    - ``temperature``: 0 by default, so comparisons repeat.
    - ``context_window``: the model's window in tokens (known for common OpenAI models): a
      prompt that does not fit with ``max_tokens`` is refused before the call
      (:class:`~graphfuse.compare.ContextWindowExceeded`).
    - ``structured_output``: send a judge's JSON schema as ``response_format`` (OpenAI's
      structured outputs); turn it off for servers that do not support it.
    - ``timeout``, ``retry``: as the embedders: seconds per request (capped by the caller's
      :func:`graphfuse.deadline`), and the :class:`~graphfuse.retry.RetryPolicy` for 429 (with
      Retry-After), 5xx and network errors; the SDK's own retries are off.

    Token usage is the provider's (``usage_source="provider"``) when the reply carries it, else
    counted with :func:`graphfuse.compare.default_counter` (``"counted"``).
    """

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float | None = 0.0,
        context_window: int | None = None,
        structured_output: bool = True,
        timeout: float = 60.0,
        retry: RetryPolicy = _DEFAULT_RETRY,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise InvalidInput(f"model must be a non-empty string, got {model!r}")
        if temperature is not None and (
            isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2
        ):
            raise InvalidInput(f"temperature must be a number in 0-2, got {temperature!r}")
        if context_window is not None and (
            isinstance(context_window, bool) or not isinstance(context_window, int) or context_window < 1
        ):
            raise InvalidInput(f"context_window must be a positive int of tokens, got {context_window!r}")
        _positive(timeout, "timeout")
        if not isinstance(retry, RetryPolicy):
            raise InvalidInput(f"retry must be a graphfuse.retry.RetryPolicy, got {retry!r}")
        self.model = model
        self.temperature = temperature
        self.context_window = context_window if context_window is not None else _WINDOWS.get(model)
        self.supports_json_schema = bool(structured_output)
        self.timeout = float(timeout)
        self.retry = retry
        if base_url is not None and (not isinstance(base_url, str) or not base_url.startswith(("http://", "https://"))):
            raise InvalidInput(
                f"base_url must be an http:// or https:// URL (e.g. http://127.0.0.1:8080/v1), got {base_url!r}"
            )
        self.endpoint = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        self.is_openai = urlsplit(self.endpoint).hostname == "api.openai.com"
        if self.is_openai or api_key or os.environ.get("OPENAI_API_KEY"):
            self._api_key = resolve_api_key(api_key, "OPENAI_API_KEY", provider="OpenAI")
        else:
            self._api_key = NO_KEY
        self._base_url = self.endpoint
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: openai.AsyncOpenAI | None = None

    def __repr__(self) -> str:
        return f"OpenAIGenerator(model={self.model!r}, endpoint={self.endpoint!r}, temperature={self.temperature})"

    @property
    def provider(self) -> str:
        """Who answers, for messages: ``OpenAI`` or ``the chat-completions server at URL``."""
        return "OpenAI" if self.is_openai else f"the chat-completions server at {self.endpoint}"

    async def asuggest_concurrency(self) -> int:
        """Requests to keep in flight: 4 for OpenAI; for another server, its slots, else 1.

        A llama.cpp server says how many requests it decodes at once (``total_slots`` of
        ``GET /props``, else the length of ``GET /slots``); requests beyond that queue on the
        server and run into their timeouts. A server that says nothing gets 1.
        """
        if self.is_openai:
            return _OPENAI_CONCURRENCY
        root = self.endpoint.removesuffix("/v1")
        for path in ("/props", "/slots"):
            try:
                data = await self._sdk().get(root + path, cast_to=object, options={"timeout": min(self.timeout, 10.0)})
            except (openai.OpenAIError, ValueError):
                continue
            slots = (
                data.get("total_slots") if isinstance(data, dict) else (len(data) if isinstance(data, list) else None)
            )
            if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1:
                return slots
        return 1

    async def close(self) -> None:
        """Close the HTTP client (a later call opens a new one).

        A client opened on another event loop (one that has ended since) is dropped, not closed.
        """
        client, loop, self._client, self._loop = self._client, self._loop, None, None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

    async def __aenter__(self) -> OpenAIGenerator:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _sdk(self) -> openai.AsyncOpenAI:
        # An HTTP connection pool belongs to one event loop: a call from another loop gets its own client.
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self._base_url, timeout=self.timeout, max_retries=0
            )
            self._loop = loop
        return self._client

    async def agenerate(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> Generation:
        """One chat completion; ``json_schema`` (``{"name", "schema", "strict"?}``) asks for structured output."""
        checked = check_messages(messages)
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise InvalidInput(f"max_tokens must be a positive int, got {max_tokens!r}")
        counter = None
        if self.context_window is not None:
            counter = default_counter()
            prompt = count_messages(checked, counter)
            if prompt + (max_tokens or 0) > self.context_window:
                raise ContextWindowExceeded(
                    prompt_tokens=prompt,
                    max_tokens=max_tokens or 0,
                    context_window=self.context_window,
                    counter=counter.name,
                    model=self.model,
                )
        options: dict[str, Any] = {}
        if max_tokens is not None:
            options["max_tokens"] = max_tokens
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if json_schema is not None and self.supports_json_schema:
            options["response_format"] = {"type": "json_schema", "json_schema": json_schema}

        async def attempt() -> Any:
            timeout = attempt_timeout(self.timeout)
            try:
                # The SDK's documented request method for a body we built and checked ourselves:
                # chat.completions.create() re-walks every message against its TypedDicts first
                # (its CPU cost: docs/compare.md, "Cost of the harness").
                return await self._sdk().post(
                    "/chat/completions",
                    body={"model": self.model, "messages": checked, **options},
                    cast_to=ChatCompletion,
                    options={"timeout": timeout},
                )
            except openai.APIStatusError as error:
                raise error_for_status(
                    error.status_code, provider=self.provider, detail=error.message, headers=error.response.headers
                ) from error
            except openai.APITimeoutError as error:
                raise RequestTimedOut(
                    f"{self.provider} did not answer within {timeout:g} s (the generator's timeout; "
                    "`graphfuse compare --llm-timeout`)"
                ) from error
            except openai.APIConnectionError as error:
                raise ConnectionFailed(
                    f"{self.provider} could not be reached or did not answer: {error.message}"
                ) from error

        started = time.perf_counter()
        response = await call_with_retry(attempt, self.retry, describe=f"chat completion at {self.endpoint}")
        latency = time.perf_counter() - started
        if not response.choices:
            raise InvalidInput(f"{self.provider} returned no choices (model {self.model!r})")
        message = response.choices[0].message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise InvalidInput(f"model {self.model!r} at {self.endpoint} refused: {refusal}")
        text = message.content or ""
        usage = response.usage
        if usage is not None and usage.prompt_tokens is not None and usage.completion_tokens is not None:
            return Generation(text, usage.prompt_tokens, usage.completion_tokens, "provider", latency)
        counter = counter or default_counter()
        return Generation(text, count_messages(checked, counter), counter.count(text), "counted", latency)
