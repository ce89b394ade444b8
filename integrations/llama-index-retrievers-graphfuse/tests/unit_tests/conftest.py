"""Shared fixtures: the test corpus in the in-memory and SQLite graph stores and a local vector store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from _llamaindex_corpus import DOCS, RELATIONS

from graphfuse import GraphStore, VectorRecord
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore


@pytest.fixture(params=["memory", "sqlite"])
async def graph_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[GraphStore]:
    """The corpus in the in-memory fake and in the embedded SQLite store (each test runs on both)."""
    store: GraphStore = InMemoryGraphStore() if request.param == "memory" else SQLiteGraphStore(tmp_path / "graph.db")
    await store.store_documents(DOCS)
    await store.create_relations(RELATIONS)
    yield store
    await store.close()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(64)


@pytest.fixture
async def vector_store(embedder: HashingEmbedder) -> AsyncIterator[LocalVectorStore]:
    store = LocalVectorStore(dimension=64)
    vectors = await embedder.embed_documents([d.content or "" for d in DOCS])
    await store.upsert([VectorRecord(d.id, v, dict(d.metadata)) for d, v in zip(DOCS, vectors, strict=True)])
    yield store
    await store.close()
