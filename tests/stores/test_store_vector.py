"""LocalVectorStore beyond the contract suite: exactness, persistence, other writers, bad files."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np
import pytest

from graphfuse import Document, InvalidInput, StoreCorrupted, VectorRecord
from graphfuse.stores import LocalVectorStore, SQLiteGraphStore


def unit_rows(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, d)).astype(np.float32)
    out: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


async def test_search_is_exact_with_and_without_filters() -> None:
    data = unit_rows(3000, 16)
    store = LocalVectorStore()
    await store.upsert(
        [VectorRecord(f"v{i}", data[i].tolist(), {"t": i % 7, "even": i % 2 == 0}) for i in range(len(data))]
    )
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = rng.standard_normal(16).astype(np.float32)
        query = q.tolist()
        scores = data @ (q / np.linalg.norm(q))
        hits = await store.search(query, limit=20)
        assert [h.id for h in hits] == [f"v{i}" for i in np.argsort(-scores)[:20]]
        assert [h.score for h in hits] == pytest.approx(np.sort(scores)[::-1][:20].tolist(), abs=1e-5)
        # A rare filter (the gather path) and a common one (the full-product path).
        residue = np.arange(len(data)) % 7
        for spec, allowed in (({"t": 3}, residue == 3), ({"t": {"$ne": 3}}, residue != 3)):
            expected = [f"v{i}" for i in np.argsort(-np.where(allowed, scores, -np.inf))[:20]]
            assert [h.id for h in await store.search(query, limit=20, filter=spec)] == expected
        ranked = np.sort(scores)[::-1]
        floor = float(ranked[7] + ranked[8]) / 2  # between the 8th and 9th best
        assert len(await store.search(query, limit=20, min_score=floor)) == 8
    await store.close()


async def test_persists_and_reloads(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    data = unit_rows(50, 8)
    store = LocalVectorStore(path)
    await store.upsert([VectorRecord(f"v{i}", data[i].tolist(), {"i": i}) for i in range(50)])
    await store.upsert([VectorRecord("v0", data[1], {"i": -1})])
    assert await store.delete(["v2", "v3", "missing"]) == 2
    before = await store.search(data[1].tolist(), limit=5)
    await store.close()

    store = LocalVectorStore(path)
    assert store.dimension == 8
    assert await store.count() == 48
    assert await store.search(data[1].tolist(), limit=5) == before
    assert [h.id for h in await store.search(data[0].tolist(), limit=48, filter={"i": -1})] == ["v0"]
    with pytest.raises(InvalidInput, match="dimension"):
        await store.upsert([VectorRecord("w", [1.0] * 9)])
    await store.close()
    with pytest.raises(InvalidInput, match="dimension 8"):
        LocalVectorStore(path, dimension=9)


async def test_constructor_dimension_is_enforced_from_the_start(tmp_path: Path) -> None:
    store = LocalVectorStore(tmp_path / "v.sqlite", dimension=3)
    with pytest.raises(InvalidInput):
        await store.upsert([VectorRecord("a", [1.0, 0.0])])
    assert await store.count() == 0
    await store.upsert([VectorRecord("a", [1.0, 0.0, 0.0])])
    await store.close()
    assert LocalVectorStore(tmp_path / "v.sqlite").dimension == 3
    with pytest.raises(InvalidInput):
        LocalVectorStore(dimension=0)


async def test_bad_batches_write_nothing(tmp_path: Path) -> None:
    store = LocalVectorStore(tmp_path / "v.sqlite")
    await store.upsert([VectorRecord("keep", [1.0, 0.0])])
    bad_batches = [
        [VectorRecord("x", [1.0, 0.0]), VectorRecord("x", [0.0, 1.0])],  # duplicate id
        [VectorRecord("x", [1.0, 0.0]), VectorRecord("zero", [0.0, 0.0])],  # zero vector
        [VectorRecord("x", [1.0, 0.0]), VectorRecord("nan", [float("nan"), 1.0])],
        [VectorRecord("x", [1.0, 0.0]), VectorRecord("meta", [1.0, 1.0], {"o": object()})],
        [VectorRecord("x", [1.0, 0.0]), VectorRecord("text", "ab")],  # type: ignore[arg-type]
        [VectorRecord("x", [1.0, 0.0]), "not a record"],
    ]
    for batch in bad_batches:
        with pytest.raises(InvalidInput):
            await store.upsert(batch)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        await store.upsert(VectorRecord("x", [1.0, 0.0]))  # type: ignore[arg-type]
    assert await store.count() == 1
    with pytest.raises(InvalidInput):
        await store.search([0.0, 0.0])
    with pytest.raises(InvalidInput):
        await store.search([1.0, 0.0], min_score=float("nan"))
    await store.close()
    reopened = LocalVectorStore(tmp_path / "v.sqlite")
    assert await reopened.count() == 1
    await reopened.close()


async def test_writes_by_another_store_object_are_seen(tmp_path: Path) -> None:
    a, b = LocalVectorStore(tmp_path / "v.sqlite"), LocalVectorStore(tmp_path / "v.sqlite")
    await a.upsert([VectorRecord("x", [1.0, 0.0])])
    assert [h.id for h in await b.search([1.0, 0.0])] == ["x"]
    await b.upsert([VectorRecord("y", [0.0, 1.0])])
    await b.delete(["x"])
    assert [h.id for h in await a.search([1.0, 0.0])] == ["y"]
    assert await a.count() == 1
    await a.close()
    await b.close()


async def test_foreign_or_damaged_files_are_corrupted(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00garbage" * 1000)
    with pytest.raises(StoreCorrupted):
        LocalVectorStore(junk)
    graph_file = tmp_path / "graph.sqlite"  # a GraphFuse file of the other kind
    graph = SQLiteGraphStore(graph_file)
    await graph.store_documents([Document("a", "apple")])
    await graph.close()
    with pytest.raises(StoreCorrupted, match="not a GraphFuse vector store"):
        LocalVectorStore(graph_file)


async def test_concurrent_upserts_and_searches_from_threads_and_tasks() -> None:
    store = LocalVectorStore(dimension=8)
    data = unit_rows(400, 8, seed=2)
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for j in range(k * 50, k * 50 + 50, 10):
                asyncio.run(store.upsert([VectorRecord(f"v{i}", data[i].tolist()) for i in range(j, j + 10)]))
                hits = asyncio.run(store.search(data[j].tolist(), limit=3))
                assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    await asyncio.gather(
        *(store.upsert([VectorRecord(f"v{i}", data[i].tolist())]) for i in range(200, 400)),
        *(store.search(data[0].tolist(), limit=5) for _ in range(20)),
    )
    for t in threads:
        t.join()
    assert errors == []
    assert await store.count() == 400
    for i in (0, 199, 200, 399):
        assert (await store.search(data[i].tolist(), limit=1))[0].id == f"v{i}"
