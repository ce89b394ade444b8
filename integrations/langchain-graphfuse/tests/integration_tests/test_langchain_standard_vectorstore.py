"""LangChain's standard vector store suite, offline, on GraphFuseVectorStore (in memory and on disk)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_graphfuse import GraphFuseVectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests


class TestGraphFuseVectorStoreStandard(VectorStoreIntegrationTests):
    """The suite's own embeddings (``DeterministicFakeEmbedding``), the default ``multihop`` preset."""

    @pytest.fixture
    def vectorstore(self) -> GraphFuseVectorStore:  # type: ignore[override]
        return GraphFuseVectorStore(embedding=self.get_embeddings())


class TestGraphFuseVectorStoreOnDiskStandard(VectorStoreIntegrationTests):
    """The same suite on a store directory (the format ``graphfuse index --store`` writes)."""

    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Iterator[GraphFuseVectorStore]:  # type: ignore[override]
        store = GraphFuseVectorStore(embedding=self.get_embeddings(), path=tmp_path / "store")
        yield store
        store.close()
