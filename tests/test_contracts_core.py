"""The graphfuse.testing contract suites run against the core's embedded backends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from graphfuse.stores import InMemoryCacheStore, InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore
from graphfuse.testing import CacheStoreContract, GraphStoreContract, VectorStoreContract


class TestSQLiteGraphStoreContract(GraphStoreContract):
    @pytest.fixture
    async def graph_store(self, tmp_path: Path) -> AsyncIterator[SQLiteGraphStore]:
        store = SQLiteGraphStore(tmp_path / "graph.sqlite")
        yield store
        await store.close()


class TestInMemoryGraphStoreContract(GraphStoreContract):
    @pytest.fixture
    async def graph_store(self) -> AsyncIterator[InMemoryGraphStore]:
        store = InMemoryGraphStore()
        yield store
        await store.close()


class TestLocalVectorStoreInMemoryContract(VectorStoreContract):
    @pytest.fixture
    async def vector_store(self) -> AsyncIterator[LocalVectorStore]:
        store = LocalVectorStore(None)
        yield store
        await store.close()


class TestLocalVectorStoreOnDiskContract(VectorStoreContract):
    @pytest.fixture
    async def vector_store(self, tmp_path: Path) -> AsyncIterator[LocalVectorStore]:
        store = LocalVectorStore(tmp_path / "vectors.sqlite")
        yield store
        await store.close()


class TestInMemoryCacheStoreContract(CacheStoreContract):
    @pytest.fixture
    async def cache_store(self) -> AsyncIterator[InMemoryCacheStore]:
        store = InMemoryCacheStore()
        yield store
        await store.close()
