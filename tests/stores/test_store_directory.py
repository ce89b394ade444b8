"""StoreDirectory / open_store: one manifest, the same store for Python users and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput, NotFound, StoreCorrupted
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.stores import StoreDirectory, aopen_store

RECORDS = [
    SourceRecord("apples", "Apples grow in orchards and are picked in autumn.", title="Apples"),
    SourceRecord("pears", "Pears are picked in late summer, near the Apples.", title="Pears"),
]


async def test_python_builds_and_the_cli_reads_the_same_store(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    async with await aopen_store(directory, create=True, embedder="hashing") as store:
        assert isinstance(store, StoreDirectory)
        assert dict(store.components) == {"embedder": "hashing", "graph_store": "sqlite", "vector_store": "local"}
        await Indexer(store.graph, store.vectors, store.embedder).aindex(RECORDS)
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["components"]["embedder"] == "hashing"
    assert manifest["counts"]["documents"] == 2
    leftovers = [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []  # one manifest, written atomically (no temporary file left)
    result = CliRunner().invoke(app, ["query", "apples", "--store", str(directory), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["id"] == "apples"
    # Reopened from Python with nothing named: the manifest's components.
    async with await aopen_store(directory) as again:
        assert isinstance(again.embedder, HashingEmbedder)
        results = await (await again.apipeline("standard")).aretrieve("pears summer", top_k=1)
        assert results[0].id == "pears"
        assert "rerank" in results[0].signals  # the preset needs a reranker: the store's embedder reranks


async def test_names_must_match_what_the_store_was_built_with(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    await (await aopen_store(directory, create=True, embedder="hashing")).aclose()
    with pytest.raises(InvalidInput, match="was indexed with embedder 'hashing', not 'local'"):
        await aopen_store(directory, embedder="local")
    with pytest.raises(NotFound, match="no GraphFuse store at"):
        await aopen_store(tmp_path / "missing")


async def test_damaged_components_are_reported(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    await (await aopen_store(directory, create=True, embedder="hashing")).aclose()
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["components"] = {"embedder": 3}
    (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreCorrupted, match="'components' does not name the store's components"):
        await aopen_store(directory)


async def test_memory_backends_are_refused_and_leave_nothing_behind(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="graph store 'memory' keeps nothing"):
        await aopen_store(tmp_path / "s", create=True, embedder="hashing", graph_store="memory")
    with pytest.raises(NotFound, match="no embedder named 'nope'"):
        await aopen_store(tmp_path / "s", create=True, embedder="nope")
    assert not (tmp_path / "s").exists()
