"""The Voyage AI reranker (``/v1/rerank``)."""

from __future__ import annotations

from voyageai.client_async import AsyncClient

from graphfuse.providers import RemoteReranker
from graphfuse.retry import RetryPolicy

from ._client import DEFAULT_RETRY, VoyageConnection

__all__ = ["VoyageReranker"]


class VoyageReranker(RemoteReranker):
    """Scores documents against a query with Voyage AI's rerank API (official ``voyageai`` SDK).

    Returns Voyage's ``relevance_score`` (in [0, 1]) for each document, in input order. More
    than ``batch_size`` (<= 1000) documents are sent in several requests; the scores are
    absolute, so they stay comparable across requests. ``api_key``, ``base_url``, ``timeout``
    and ``retry`` are as for :class:`~graphfuse_voyage.VoyageEmbedder`. A response that does
    not score every document exactly once, or a score outside [0, 1], raises
    :class:`~graphfuse.InvalidInput`.
    """

    provider = "Voyage AI"
    max_batch = 1000

    def __init__(
        self,
        model: str = "rerank-2",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int = 1000,
        timeout: float = 30.0,
        retry: RetryPolicy = DEFAULT_RETRY,
    ) -> None:
        super().__init__(model, batch_size=batch_size, timeout=timeout, retry=retry)
        self._connection = VoyageConnection(api_key, base_url=base_url, timeout=self.timeout, retry=self.retry)

    async def _rerank_batch(self, query: str, documents: list[str]) -> list[tuple[int, float]]:
        async def request(client: AsyncClient) -> list[tuple[int, float]]:
            result = await client.rerank(query, documents, self.model)
            return [(r.index, r.relevance_score) for r in result.results]

        return await self._connection.call("rerank", request)
