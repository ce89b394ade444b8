"""What the Voyage AI embedder and reranker share: the SDK client, its timeouts, retries and errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from voyageai.client_async import AsyncClient
from voyageai.error import VoyageError

from graphfuse.providers import api_key as resolve_api_key
from graphfuse.retry import RetryPolicy, attempt_timeout, call_with_retry, error_for_status

__all__ = ["DEFAULT_RETRY", "VoyageConnection"]

T = TypeVar("T")

DEFAULT_RETRY = RetryPolicy()


class VoyageConnection:
    """The API key and base URL, and SDK clients built from them.

    The key is ``api_key`` or ``VOYAGE_API_KEY`` (else :class:`~graphfuse.AuthenticationFailed`).
    The SDK's own retries are disabled (``max_retries=0``): the caller's policy is the only
    one. The Voyage SDK fixes its timeout per client and opens an HTTP session per request, so
    each attempt gets a client (a cheap object) whose timeout is that attempt's share of the
    deadline; there is nothing to close.
    """

    def __init__(self, api_key: str | None, *, base_url: str | None, timeout: float, retry: RetryPolicy) -> None:
        self._api_key = resolve_api_key(api_key, "VOYAGE_API_KEY", provider="Voyage AI")
        self._base_url = base_url
        self._timeout = timeout
        self._retry = retry

    async def call(self, describe: str, request: Callable[[AsyncClient], Awaitable[T]]) -> T:
        """Run ``request(client)`` under the retry policy, errors mapped to GraphFuse's."""

        async def attempt() -> T:
            timeout = attempt_timeout(self._timeout)
            client = AsyncClient(api_key=self._api_key, max_retries=0, timeout=timeout, base_url=self._base_url)
            try:
                return await request(client)
            except VoyageError as error:
                detail = error.user_message or type(error).__name__
                raise error_for_status(
                    error.http_status, provider="Voyage AI", detail=detail, headers=error.headers
                ) from error

        return await call_with_retry(attempt, self._retry, describe=f"Voyage AI {describe}")
