"""The Cohere reranker (``/v2/rerank``)."""

from __future__ import annotations

from cohere import AsyncClientV2

from graphfuse.providers import RemoteReranker
from graphfuse.retry import RetryPolicy

from ._client import DEFAULT_RETRY, CohereConnection

__all__ = ["CohereReranker"]


class CohereReranker(RemoteReranker):
    """Scores documents against a query with Cohere's rerank API (official ``cohere`` SDK).

    Returns Cohere's ``relevance_score`` (in [0, 1]) for each document, in input order.
    More than ``batch_size`` (<= 1000) documents are sent in several requests; Cohere's scores
    are absolute, so they stay comparable across requests. ``api_key``, ``base_url``,
    ``timeout`` and ``retry`` are as for :class:`~graphfuse_cohere.CohereEmbedder`.
    A response that does not score every document exactly once, or a score outside [0, 1],
    raises :class:`~graphfuse.InvalidInput`.
    """

    provider = "Cohere"
    max_batch = 1000

    def __init__(
        self,
        model: str = "rerank-english-v3.0",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int = 1000,
        timeout: float = 30.0,
        retry: RetryPolicy = DEFAULT_RETRY,
    ) -> None:
        super().__init__(model, batch_size=batch_size, timeout=timeout, retry=retry)
        self._connection = CohereConnection(api_key, base_url=base_url, timeout=self.timeout, retry=self.retry)

    async def close(self) -> None:
        """Close the HTTP client."""
        await self._connection.close()

    async def _rerank_batch(self, query: str, documents: list[str]) -> list[tuple[int, float]]:
        async def request(client: AsyncClientV2, timeout: float) -> list[tuple[int, float]]:
            response = await client.rerank(
                model=self.model, query=query, documents=documents, request_options={"timeout": timeout}
            )
            return [(r.index, r.relevance_score) for r in response.results]

        return await self._connection.call("rerank", request)
