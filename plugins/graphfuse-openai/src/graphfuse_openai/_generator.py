"""The OpenAI chat-completions generator (``/v1/chat/completions``) for :mod:`graphfuse.compare`."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from graphfuse import ConnectionFailed, InvalidInput
from graphfuse.compare import ContextWindowExceeded, Generation, check_messages, count_messages, default_counter
from graphfuse.providers import api_key as resolve_api_key
from graphfuse.retry import RetryPolicy, attempt_timeout, call_with_retry, error_for_status

__all__ = ["OpenAIGenerator"]

_DEFAULT_RETRY = RetryPolicy()
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
      API works (vLLM, llama.cpp, Ollama's OpenAI endpoint).
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
        self._api_key = resolve_api_key(api_key, "OPENAI_API_KEY", provider="OpenAI")
        self._base_url = base_url
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: openai.AsyncOpenAI | None = None

    def __repr__(self) -> str:
        return f"OpenAIGenerator(model={self.model!r}, temperature={self.temperature})"

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
                    error.status_code, provider="OpenAI", detail=error.message, headers=error.response.headers
                ) from error
            except openai.APIConnectionError as error:
                raise ConnectionFailed(f"OpenAI could not be reached or did not answer: {error.message}") from error

        started = time.perf_counter()
        response = await call_with_retry(attempt, self.retry, describe="OpenAI chat completion")
        latency = time.perf_counter() - started
        if not response.choices:
            raise InvalidInput(f"OpenAI returned no choices (model {self.model!r})")
        message = response.choices[0].message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise InvalidInput(f"OpenAI model {self.model!r} refused: {refusal}")
        text = message.content or ""
        usage = response.usage
        if usage is not None and usage.prompt_tokens is not None and usage.completion_tokens is not None:
            return Generation(text, usage.prompt_tokens, usage.completion_tokens, "provider", latency)
        counter = counter or default_counter()
        return Generation(text, count_messages(checked, counter), counter.count(text), "counted", latency)
