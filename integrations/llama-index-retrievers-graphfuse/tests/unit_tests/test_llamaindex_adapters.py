"""LlamaIndex components as GraphFuse ones and back: embeddings and vector stores (the adapters)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from _llamaindex_corpus import DOCS
from llama_index.core import MockEmbedding
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryResult
from llama_index.retrievers.graphfuse import (
    GraphFuseEmbedding,
    LlamaIndexEmbedder,
    LlamaIndexVectorStore,
    to_metadata_filters,
)

from graphfuse import InvalidInput, Pipeline, VectorRecord
from graphfuse.embedders import HashingEmbedder
from graphfuse.stages import Hydrate, SemanticSearch


async def test_llamaindex_embedder_uses_the_async_api(embedder: object) -> None:
    class AsyncOnly(MockEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            raise AssertionError("sync query embedding")

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            raise AssertionError("sync text embedding")

    adapter = LlamaIndexEmbedder(AsyncOnly(embed_dim=4), dimension=4)
    assert await adapter.embed_query("q") == [0.5] * 4
    assert await adapter.embed_documents(["a", "b"]) == [[0.5] * 4, [0.5] * 4]
    with pytest.raises(InvalidInput, match="dimension 4, expected 5"):
        await LlamaIndexEmbedder(MockEmbedding(embed_dim=4), dimension=5).embed_query("q")


async def test_graphfuse_embedding_in_llamaindex_async_path_stays_on_the_loop(embedder: object) -> None:
    loop_thread = threading.current_thread().name

    class Watched:
        dimension = 64

        async def embed_query(self, text: str) -> list[float]:
            assert threading.current_thread().name == loop_thread
            return await embedder.embed_query(text)  # type: ignore[attr-defined, no-any-return]

        async def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return await embedder.embed_documents(texts)  # type: ignore[attr-defined, no-any-return]

    emb = GraphFuseEmbedding(Watched())
    assert await emb.aget_query_embedding("q") == await embedder.embed_query("q")  # type: ignore[attr-defined]
    assert emb.get_text_embedding("q") == (await embedder.embed_documents(["q"]))[0]  # type: ignore[attr-defined]


async def test_llamaindex_vector_store_serves_a_graphfuse_pipeline(graph_store: object, embedder: object) -> None:
    store = LlamaIndexVectorStore(SimpleVectorStore(), dimension=64)
    vectors = await embedder.embed_documents([d.content or "" for d in DOCS])  # type: ignore[attr-defined]
    records = [VectorRecord(d.id, v, {"tenant": d.metadata["tenant"]}) for d, v in zip(DOCS, vectors, strict=True)]
    await store.upsert(records)
    assert await store.count() == len(DOCS)
    pipeline = Pipeline([SemanticSearch(store, embedder), Hydrate(graph_store)])  # type: ignore[arg-type]
    found = await pipeline.aretrieve("Secret plans of another tenant", top_k=2, filter={"tenant": "acme"})
    assert found
    assert all(r.document.metadata["tenant"] == "acme" for r in found)
    unfiltered = await pipeline.aretrieve("Secret plans of another tenant", top_k=1)
    assert unfiltered[0].id == "x"
    assert await store.delete(["x", "nope"]) == 1
    assert await store.count() == len(DOCS) - 1
    with pytest.raises(InvalidInput, match="dimension"):
        await store.upsert([VectorRecord("bad", [1.0, 2.0])])
    with pytest.raises(InvalidInput, match="exists"):
        to_metadata_filters(__import__("graphfuse").MetadataFilter.parse({"k": {"$exists": True}}))


class LoopGuardedStore(SimpleVectorStore):
    """A SimpleVectorStore whose sync query refuses to run on a thread with a running event loop."""

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return super().query(query, **kwargs)
        raise AssertionError("sync query called on the event loop thread")

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        return await asyncio.to_thread(super().query, query, **kwargs)


async def test_llamaindex_vector_store_awaits_the_async_query(embedder: object) -> None:
    store = LlamaIndexVectorStore(LoopGuardedStore(), dimension=64)
    vectors = await embedder.embed_documents(["alpha", "beta"])  # type: ignore[attr-defined]
    await store.upsert([VectorRecord("a", vectors[0]), VectorRecord("b", vectors[1])])
    hits = await store.search(vectors[1], limit=1)
    assert [h.id for h in hits] == ["b"]
    assert hits[0].score == pytest.approx(1.0)
    assert await store.search(vectors[1], limit=2, min_score=0.999) == hits


def test_graphfuse_embedding_batches_as_the_indexer_does() -> None:
    """LlamaIndex's default embed_batch_size (10) would call a local model in batches of 10."""
    calls: list[int] = []

    class Counting(HashingEmbedder):
        async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
            calls.append(len(texts))
            return await super().embed_documents(texts)

    embedding = GraphFuseEmbedding(Counting(dimension=16))
    assert embedding.embed_batch_size == 64
    embedding.get_text_embedding_batch([f"text {i}" for i in range(100)])
    assert calls == [64, 36]
    assert GraphFuseEmbedding(HashingEmbedder(dimension=16), embed_batch_size=5).embed_batch_size == 5
