"""LocalStore: the store directory, its manifest, and how damaged directories are reported."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from graphfuse import Document, InvalidInput, NotFound, Relation, StoreCorrupted, VectorRecord
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import LocalStore


async def test_create_fill_close_reopen(tmp_path: Path) -> None:
    directory = tmp_path / ".graphfuse"
    store = LocalStore.open(directory)
    assert {"graph.sqlite", "manifest.json", "vectors.sqlite"} <= {p.name for p in directory.iterdir()}
    assert store.manifest["counts"] == {"documents": 0, "relations": 0, "vectors": 0}
    embedder = HashingEmbedder(32)
    await store.ause_embedder(embedder)
    await store.graph.store_documents([Document("a", "apple"), Document("b", "banana")])
    await store.graph.create_relations([Relation("a", "b")])
    vectors = await embedder.embed_documents(["apple", "banana"])
    await store.vectors.upsert([VectorRecord("a", vectors[0]), VectorRecord("b", vectors[1])])
    await store.aclose()
    await store.aclose()  # idempotent

    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["counts"] == {"documents": 2, "relations": 1, "vectors": 2}
    assert manifest["dimension"] == 32
    assert manifest["embedder"].startswith("graphfuse.embedders._hashing.HashingEmbedder:hashing-v1:32")
    assert manifest["version"] == 1

    async with await LocalStore.aopen(directory, create=False) as again:
        assert (await again.graph.get_document("a")).content == "apple"
        assert [h.id for h in await again.vectors.search(vectors[1], limit=1)] == ["b"]
        await again.ause_embedder(HashingEmbedder(32))  # same identity: accepted
        with pytest.raises(InvalidInput, match="was built with embedder"):
            await again.ause_embedder(HashingEmbedder(64))


def test_missing_store_without_create(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        LocalStore.open(tmp_path / "nothing", create=False)
    assert not (tmp_path / "nothing").exists()


def test_half_written_directory(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    directory.mkdir()
    sqlite3.connect(directory / "graph.sqlite").close()  # data file, no manifest
    os.utime(directory / "graph.sqlite", (time.time() - 60, time.time() - 60))  # an interrupted creation
    with pytest.raises(StoreCorrupted, match=r"no manifest\.json.*half-written"):
        LocalStore.open(directory)


async def test_damaged_manifest_or_files(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    LocalStore.open(directory).close()
    manifest = directory / "manifest.json"
    good = manifest.read_text()

    manifest.write_text(good[: len(good) // 2])
    with pytest.raises(StoreCorrupted, match=r"manifest\.json is unreadable"):
        LocalStore.open(directory)

    manifest.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(StoreCorrupted, match="not a GraphFuse store manifest"):
        LocalStore.open(directory)

    manifest.write_text(good.replace('"version": 1', '"version": 7'))
    with pytest.raises(StoreCorrupted, match="format version 7"):
        LocalStore.open(directory)

    manifest.write_text(good)
    (directory / "vectors.sqlite").unlink()
    with pytest.raises(StoreCorrupted, match=r"vectors\.sqlite is missing"):
        LocalStore.open(directory)

    (directory / "vectors.sqlite").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StoreCorrupted, match=r"vectors\.sqlite"):
        LocalStore.open(directory)


async def test_manifest_dimension_must_match_the_vectors(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    store = LocalStore.open(directory)
    await store.vectors.upsert([VectorRecord("a", [1.0, 0.0, 0.0])])
    await store.aclose()
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["dimension"] == 3
    manifest["dimension"] = 4
    (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreCorrupted, match="dimension 4"):
        LocalStore.open(directory)


def test_a_file_is_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(StoreCorrupted, match="is a file"):
        LocalStore.open(tmp_path / "f")


async def test_embedder_with_another_dimension_than_the_vectors(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "s")
    await store.vectors.upsert([VectorRecord("a", [1.0, 0.0])])
    with pytest.raises(InvalidInput, match="2-d vectors"):
        await store.ause_embedder(HashingEmbedder(16))
    await store.aclose()
