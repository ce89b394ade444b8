"""The embedded graph stores' public snapshots: ``adjacency()`` and ``iter_documents()``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from graphfuse import Document, InvalidInput, Relation
from graphfuse.stores import InMemoryGraphStore, SQLiteGraphStore

Store = SQLiteGraphStore | InMemoryGraphStore


@pytest.fixture(params=["sqlite", "memory"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    s: Store = SQLiteGraphStore(tmp_path / "g.sqlite") if request.param == "sqlite" else InMemoryGraphStore()
    yield s
    await s.close()


async def _documents(store: Store, **kwargs: object) -> list[Document]:
    return [d async for d in store.iter_documents(**kwargs)]  # type: ignore[arg-type]


def _dense(ids: tuple[str, ...], matrix: object) -> dict[tuple[str, str], float]:
    coo = matrix.tocoo()  # type: ignore[attr-defined]
    return {(ids[i], ids[j]): float(w) for i, j, w in zip(coo.row, coo.col, coo.data, strict=True)}


# -- adjacency -------------------------------------------------------------------------------


async def test_adjacency_is_directed_weighted_and_typed(store: Store) -> None:
    await store.store_documents([Document(i, i) for i in ("a", "b", "c", "d")])
    await store.create_relations(
        [
            Relation("a", "b", "CITES", 2.0),
            Relation("a", "b", "MENTIONS", 0.5),  # parallel relations of two types add up
            Relation("c", "b", "MENTIONS", 0.25),
            Relation("b", "a", "CITES"),
        ]
    )
    ids, matrix = await store.adjacency()
    assert ids == ("a", "b", "c", "d")
    assert matrix.shape == (4, 4)
    assert _dense(ids, matrix) == {("a", "b"): 2.5, ("c", "b"): 0.25, ("b", "a"): 1.0}
    _, cites = await store.adjacency(["CITES"])
    assert _dense(ids, cites) == {("a", "b"): 2.0, ("b", "a"): 1.0}
    _, both = await store.adjacency(["CITES", "MENTIONS", "UNKNOWN"])
    assert _dense(ids, both) == _dense(ids, matrix)
    _, none = await store.adjacency(["UNKNOWN"])
    assert none.shape == (4, 4)
    assert none.nnz == 0


async def test_adjacency_is_a_shared_read_only_snapshot(store: Store) -> None:
    await store.store_documents([Document(i, i) for i in ("a", "b", "c")])
    await store.create_relations([Relation("a", "b")])
    ids, matrix = await store.adjacency()
    again_ids, again = await store.adjacency()
    assert again is matrix  # unchanged graph: the same object, so callers can cache by identity
    assert again_ids is ids
    with pytest.raises(ValueError, match="read-only"):
        matrix.data[0] = 5.0
    assert isinstance(ids, tuple)

    await store.create_relations([Relation("b", "c", weight=3.0)])
    new_ids, new = await store.adjacency()
    assert new is not matrix
    assert _dense(new_ids, new) == {("a", "b"): 1.0, ("b", "c"): 3.0}
    assert _dense(ids, matrix) == {("a", "b"): 1.0}  # the old snapshot did not move
    await store.delete_documents(["a"])
    ids, matrix = await store.adjacency()
    assert ids == ("b", "c")
    assert _dense(ids, matrix) == {("b", "c"): 3.0}


async def test_adjacency_of_an_empty_store_and_bad_input(store: Store) -> None:
    ids, matrix = await store.adjacency()
    assert ids == ()
    assert matrix.shape == (0, 0)
    with pytest.raises(InvalidInput, match="relation_types must be a sequence"):
        await store.adjacency("CITES")  # type: ignore[arg-type]
    await store.close()
    with pytest.raises(InvalidInput, match="closed"):
        await store.adjacency()


async def test_adjacency_sees_writes_through_another_sqlite_object(tmp_path: Path) -> None:
    reader, writer = SQLiteGraphStore(tmp_path / "g.sqlite"), SQLiteGraphStore(tmp_path / "g.sqlite")
    await writer.store_documents([Document(i, i) for i in ("a", "b", "c")])
    await writer.create_relations([Relation("a", "b")])
    ids, matrix = await reader.adjacency()
    assert _dense(ids, matrix) == {("a", "b"): 1.0}
    await writer.create_relations([Relation("c", "a", weight=0.5)])
    ids, matrix = await reader.adjacency()
    assert _dense(ids, matrix) == {("a", "b"): 1.0, ("c", "a"): 0.5}
    await reader.close()
    await writer.close()


async def test_adjacency_agrees_with_related(store: Store) -> None:
    rng = np.random.default_rng(7)
    ids = [f"n{i}" for i in range(40)]
    await store.store_documents([Document(i, i) for i in ids])
    pairs = {(int(s), int(t)) for s, t in rng.integers(0, 40, size=(120, 2)) if s != t}
    await store.create_relations([Relation(ids[s], ids[t]) for s, t in sorted(pairs)])
    order, matrix = await store.adjacency()
    undirected = matrix + matrix.T
    for node in ids[:10]:
        i = order.index(node)
        neighbours = {order[j] for j in undirected[i].indices}
        assert neighbours == {r.id for r in await store.related([node], depth=1)}


# -- iter_documents --------------------------------------------------------------------------


async def test_iter_documents_returns_every_document_as_stored(store: Store) -> None:
    when = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    originals = [
        Document(f"d{i}", f"text {i}", {"tenant": "t1" if i % 2 else "t2", "n": i}, created_at=when) for i in range(7)
    ]
    originals.append(Document("bare"))
    await store.store_documents(originals)
    for batch_size in (1, 3, 8, 1000):
        got = await _documents(store, batch_size=batch_size)
        assert got == [await store.get_document(d.id) for d in originals]
    assert [d.id for d in await _documents(store, filter={"tenant": "t1"})] == ["d1", "d3", "d5"]
    assert [d.id for d in await _documents(store, filter={"n": {"$gte": 5}}, batch_size=2)] == ["d5", "d6"]

    # An upsert keeps a document's place and shows its new version; a deletion removes it.
    await store.store_documents([Document("d0", "changed")])
    await store.delete_documents(["d3"])
    got = await _documents(store, batch_size=2)
    assert [d.id for d in got] == ["d0", "d1", "d2", "d4", "d5", "d6", "bare"]
    assert got[0].content == "changed"


async def test_iter_documents_of_an_empty_store_and_bad_input(store: Store) -> None:
    assert await _documents(store) == []
    for bad in (0, -1, 2.5, True, "10"):
        with pytest.raises(InvalidInput, match="batch_size must be a positive integer"):
            store.iter_documents(batch_size=bad)  # type: ignore[arg-type]  # raised before iterating
    with pytest.raises(InvalidInput, match="operator"):
        store.iter_documents(filter={"n": {"$nope": 1}})
    await store.close()
    with pytest.raises(InvalidInput, match="closed"):
        store.iter_documents()


async def test_sqlite_iteration_survives_writes_in_between(tmp_path: Path) -> None:
    store, writer = SQLiteGraphStore(tmp_path / "g.sqlite"), SQLiteGraphStore(tmp_path / "g.sqlite")
    await writer.store_documents([Document(f"d{i}", str(i)) for i in range(6)])
    seen: list[str] = []
    async for doc in store.iter_documents(batch_size=2):
        seen.append(doc.id)
        if doc.id == "d1":  # between two batches
            await writer.delete_documents(["d4"])
            await writer.store_documents([Document("d0", "new"), Document("late", "x")])
    assert seen == ["d0", "d1", "d2", "d3", "d5", "late"]  # each at most once, in storage order
    await store.close()
    await writer.close()


async def test_memory_iteration_is_a_snapshot() -> None:
    store = InMemoryGraphStore()
    await store.store_documents([Document(f"d{i}", str(i)) for i in range(3)])
    seen = []
    async for doc in store.iter_documents(batch_size=1):
        seen.append(doc.id)
        await store.store_documents([Document(f"new-{doc.id}", "x")])  # would break a live dict iteration
        await store.delete_documents(["d2"])
    assert seen == ["d0", "d1", "d2"]
    assert await store.count_documents() == 5
