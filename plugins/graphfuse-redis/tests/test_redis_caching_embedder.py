"""graphfuse.embedders.CachingEmbedder on a RedisCacheStore: vectors are cached in Redis."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest
import redis.asyncio as aioredis
from graphfuse_redis import RedisCacheStore

from graphfuse.embedders import CachingEmbedder, HashingEmbedder


class _Counting:
    """Wraps an embedder and counts the texts it really embeds."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.embedded: list[str] = []

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        self.embedded.append(text)
        return await self.inner.embed_query(text)


async def test_caching_embedder_reads_vectors_back_from_redis(redis_url: str) -> None:
    namespace = f"test-{uuid.uuid4().hex}"
    texts = ["graph-aware retrieval", "temporal decay", "graph-aware retrieval"]
    counting = _Counting()
    store = RedisCacheStore(redis_url, namespace=namespace)
    raw = aioredis.Redis.from_url(redis_url)
    try:
        first = await CachingEmbedder(counting, store).embed_documents(texts)
        # CachingEmbedder stores float32, so the values are the inner ones rounded to float32.
        expected = await HashingEmbedder().embed_documents(texts)
        assert [pytest.approx(v, abs=1e-6) for v in expected] == first
        assert set(counting.embedded) == {"graph-aware retrieval", "temporal decay"}
        assert len(await raw.keys(f"{namespace}:*")) >= 2, "no embedding was written to Redis"

        # A new embedder and a new client: everything comes from Redis, nothing is re-embedded.
        counting.embedded.clear()
        second_store = RedisCacheStore(redis_url, namespace=namespace)
        try:
            again = await CachingEmbedder(counting, second_store).embed_documents(texts)
        finally:
            await second_store.close()
        assert again == first
        assert counting.embedded == []
    finally:
        await raw.aclose()
        await store.close()
