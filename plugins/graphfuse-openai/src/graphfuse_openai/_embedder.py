"""The OpenAI embedder (``/v1/embeddings``)."""

from __future__ import annotations

import asyncio
from typing import Any

import openai

from graphfuse import ConnectionFailed, InvalidInput
from graphfuse.providers import RemoteEmbedder
from graphfuse.providers import api_key as resolve_api_key
from graphfuse.retry import RetryPolicy, attempt_timeout, call_with_retry, error_for_status

__all__ = ["OpenAIEmbedder"]

# Native sizes of OpenAI's embedding models; the text-embedding-3 ones can be shortened.
_MODELS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
_SHORTENABLE = ("text-embedding-3-small", "text-embedding-3-large")
_DEFAULT_RETRY = RetryPolicy()


def _dimension(model: str, dimensions: int | None) -> int:
    if not isinstance(model, str):
        raise InvalidInput(f"model must be a non-empty string, got {model!r}")
    if model not in _MODELS:
        if dimensions is None:
            raise InvalidInput(f"the dimension of OpenAI model {model!r} is not known: pass dimensions=")
        return dimensions
    native = _MODELS[model]
    if dimensions is None or dimensions == native:
        return native
    if model not in _SHORTENABLE:
        raise InvalidInput(f"OpenAI model {model!r} returns {native} dimensions and cannot be shortened")
    if isinstance(dimensions, int) and dimensions > native:
        raise InvalidInput(f"OpenAI model {model!r} has at most {native} dimensions, got {dimensions}")
    return dimensions


class OpenAIEmbedder(RemoteEmbedder):
    """Embeds text with OpenAI's embeddings API through the official ``openai`` SDK.

    Queries and documents are embedded alike (OpenAI's models are symmetric), in requests of
    at most ``batch_size`` (<= 2048) texts, one after another.

    - ``dimensions``: shorten ``text-embedding-3-*`` vectors to this size (OpenAI's
      ``dimensions`` parameter); required for a model this class does not know.
    - ``api_key``: defaults to the ``OPENAI_API_KEY`` environment variable; without one,
      :class:`~graphfuse.AuthenticationFailed` is raised here.
    - ``base_url``: the API root including ``/v1`` (default OpenAI's, or ``OPENAI_BASE_URL``);
      any server speaking OpenAI's embeddings API works.
    - ``timeout``: seconds per HTTP request, capped by the caller's :func:`graphfuse.deadline`.
    - ``retry``: the :class:`~graphfuse.retry.RetryPolicy` for 429, 5xx and network errors; the
      SDK's own retries are disabled (``max_retries=0``).

    Errors: 401/403 -> :class:`~graphfuse.AuthenticationFailed`, 429 ->
    :class:`~graphfuse.RateLimited`, 5xx/timeouts -> :class:`~graphfuse.ConnectionFailed`,
    400/422 or a malformed response -> :class:`~graphfuse.InvalidInput`.
    """

    provider = "OpenAI"
    max_batch = 2048

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        dimensions: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int = 2048,
        timeout: float = 30.0,
        retry: RetryPolicy = _DEFAULT_RETRY,
    ) -> None:
        size = _dimension(model, dimensions)
        super().__init__(model, dimension=size, batch_size=batch_size, timeout=timeout, retry=retry)
        # dimensions is left out, not sent as null, when the model's own size is wanted.
        self._extra: dict[str, Any] = {} if dimensions is None else {"dimensions": dimensions}
        self._api_key = resolve_api_key(api_key, "OPENAI_API_KEY", provider="OpenAI")
        self._base_url = base_url
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: openai.AsyncOpenAI | None = None

    async def close(self) -> None:
        """Close the HTTP client (a later call opens a new one)."""
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()

    def _sdk(self) -> openai.AsyncOpenAI:
        # An HTTP connection pool belongs to one event loop: a call from another loop gets its own client.
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self._base_url, timeout=self.timeout, max_retries=0
            )
            self._loop = loop
        return self._client

    async def _embed_batch(self, texts: list[str], *, query: bool) -> list[list[float]]:
        async def attempt() -> list[list[float]]:
            timeout = attempt_timeout(self.timeout)
            try:
                response = await self._sdk().embeddings.create(
                    input=texts, model=self.model, timeout=timeout, **self._extra
                )
            except openai.APIStatusError as error:
                raise error_for_status(
                    error.status_code, provider="OpenAI", detail=error.message, headers=error.response.headers
                ) from error
            except openai.APIConnectionError as error:
                raise ConnectionFailed(f"OpenAI could not be reached or did not answer: {error.message}") from error
            except ValueError as error:  # the SDK's "No embedding data received"
                raise InvalidInput(f"OpenAI returned no embeddings for {len(texts)} texts: {error}") from error
            return [item.embedding for item in sorted(response.data, key=lambda item: item.index)]

        return await call_with_retry(attempt, self.retry, describe="OpenAI embeddings")
