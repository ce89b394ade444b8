"""What the Cohere embedder and reranker share: the SDK client, its timeouts, retries and errors."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
from cohere import AsyncClientV2
from cohere.core import ApiError

from graphfuse import ConnectionFailed
from graphfuse.providers import api_key as resolve_api_key
from graphfuse.retry import RetryPolicy, attempt_timeout, call_with_retry, error_for_status

__all__ = ["DEFAULT_RETRY", "CohereConnection"]

T = TypeVar("T")

DEFAULT_RETRY = RetryPolicy()


def _detail(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return str(body)


class CohereConnection:
    """The API key and base URL, and the SDK client built from them.

    The key is ``api_key`` or ``COHERE_API_KEY`` / ``CO_API_KEY`` (else
    :class:`~graphfuse.AuthenticationFailed`). The SDK's own retries are disabled
    (``max_retries=0``): the caller's policy is the only one. The client is created on first
    use in the running event loop, and again if a later call runs in another loop (an HTTP
    connection pool belongs to one loop).
    """

    def __init__(self, api_key: str | None, *, base_url: str | None, timeout: float, retry: RetryPolicy) -> None:
        self._api_key = resolve_api_key(api_key, "COHERE_API_KEY", "CO_API_KEY", provider="Cohere")
        self._base_url = base_url if base_url is not None else os.environ.get("CO_API_URL")
        self._timeout = timeout
        self._retry = retry
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sdk: AsyncClientV2 | None = None
        self._http: httpx.AsyncClient | None = None

    def _client(self) -> AsyncClientV2:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._loop is not loop:
            self._http = httpx.AsyncClient(timeout=self._timeout)
            self._sdk = AsyncClientV2(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self._timeout,
                max_retries=0,
                httpx_client=self._http,
                client_name="graphfuse",
            )
            self._loop = loop
        return self._sdk

    async def call(self, describe: str, request: Callable[[AsyncClientV2, float], Awaitable[T]]) -> T:
        """Run ``request(client, timeout)`` under the retry policy, errors mapped to GraphFuse's."""

        async def attempt() -> T:
            timeout = attempt_timeout(self._timeout) or self._timeout
            try:
                return await request(self._client(), timeout)
            except ApiError as error:
                raise error_for_status(
                    error.status_code, provider="Cohere", detail=_detail(error.body), headers=error.headers
                ) from error
            except httpx.TimeoutException as error:
                raise ConnectionFailed(f"Cohere did not answer within {timeout:.3g}s") from error
            except httpx.TransportError as error:
                raise ConnectionFailed(f"Cohere could not be reached: {error!r}") from error

        return await call_with_retry(attempt, self._retry, describe=f"Cohere {describe}")

    async def close(self) -> None:
        """Close the HTTP client (a later call opens a new one)."""
        http, self._http, self._sdk, self._loop = self._http, None, None, None
        if http is not None:
            await http.aclose()
