"""The graphfuse.testing contract suites run against the core's embedded backends."""

from __future__ import annotations

import re
import subprocess
import sys
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


@pytest.mark.slow
def test_testing_page_example_passes_in_strict_mode(tmp_path: Path) -> None:
    """The first snippet of docs/testing.md is a complete test module: run it with pytest."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "testing.md").read_text(encoding="utf-8")
    snippet = re.search(r"^```python\n(.*?)^```", page, re.S | re.M)
    assert snippet is not None
    (tmp_path / "test_docs_example.py").write_text(snippet.group(1), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = strict\n", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_docs_example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    summary = run.stdout.strip().splitlines()[-1]
    assert "failed" not in summary
    assert re.search(r"\b(\d{2,}) passed", summary), summary
