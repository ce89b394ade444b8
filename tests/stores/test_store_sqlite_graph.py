"""SQLiteGraphStore and InMemoryGraphStore beyond the contract suite (which test_contracts_core.py runs).

Persistence, other connections' writes, corrupt files, PageRank against networkx, traversal
against networkx on random graphs, ordering and limits, and concurrency from tasks and threads.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import networkx as nx
import pytest

from graphfuse import Document, InvalidInput, NotFound, Relation, StoreCorrupted
from graphfuse.stores import InMemoryGraphStore, SQLiteGraphStore

Store = SQLiteGraphStore | InMemoryGraphStore


def docs(*ids: str, **metadata: object) -> list[Document]:
    return [Document(i, f"text {i}", dict(metadata)) for i in ids]


@pytest.fixture(params=["sqlite", "memory"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    s: Store = SQLiteGraphStore(tmp_path / "g.sqlite") if request.param == "sqlite" else InMemoryGraphStore()
    yield s
    await s.close()


# -- persistence and other connections -----------------------------------------------------


async def test_data_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    s = SQLiteGraphStore(path)
    await s.store_documents(docs("a", "b", "c", tenant="t"))
    await s.create_relations([Relation("a", "b", "CITES", 2.0), Relation("b", "c")])
    await s.refresh_pagerank()
    before = await s.pagerank()
    await s.close()

    s = SQLiteGraphStore(path)
    assert (await s.get_document("a")).metadata["tenant"] == "t"
    assert [(r.id, r.distance) for r in await s.related(["a"], depth=2)] == [("b", 1), ("c", 2)]
    assert await s.pagerank() == pytest.approx(before)
    assert await s.count_documents() == 3
    assert await s.count_relations() == 2
    await s.close()


async def test_writes_through_another_store_object_are_seen(tmp_path: Path) -> None:
    reader, writer = SQLiteGraphStore(tmp_path / "g.sqlite"), SQLiteGraphStore(tmp_path / "g.sqlite")
    await writer.store_documents(docs("a", "b", "c"))
    await writer.create_relations([Relation("a", "b")])
    assert [r.id for r in await reader.related(["a"])] == ["b"]  # builds the reader's CSR
    assert (await reader.pagerank())["b"] == pytest.approx(1.0)
    await writer.create_relations([Relation("b", "c"), Relation("a", "c"), Relation("b", "a")])
    assert [r.id for r in await reader.related(["a"], depth=1)] == ["b", "c"]
    scores = await reader.pagerank()
    assert max(scores, key=scores.__getitem__) == "c"
    await writer.delete_documents(["b"])
    assert [r.id for r in await reader.related(["a"], depth=2)] == ["c"]
    await reader.close()
    await writer.close()


async def test_persisted_pagerank_is_read_without_building_the_graph(tmp_path: Path) -> None:
    s = SQLiteGraphStore(tmp_path / "g.sqlite")
    await s.store_documents(docs("hub", "l1", "l2"))
    await s.create_relations([Relation("l1", "hub"), Relation("l2", "hub")])
    await s.refresh_pagerank()
    expected = await s.pagerank(["hub", "l1"])
    await s.close()
    s = SQLiteGraphStore(tmp_path / "g.sqlite")
    assert await s.pagerank(["hub", "l1", "nope"]) == pytest.approx(expected)
    assert s._cached is None, "a persisted, current PageRank must not need the adjacency"
    await s.store_documents(docs("l3"))  # a write makes the persisted scores stale
    assert set(await s.pagerank()) == {"hub", "l1", "l2", "l3"}
    await s.close()


async def test_wal_mode_and_foreign_keys(tmp_path: Path) -> None:
    s = SQLiteGraphStore(tmp_path / "g.sqlite")
    await s.close()
    conn = sqlite3.connect(tmp_path / "g.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"documents", "relations", "pagerank", "meta"} <= tables
    conn.close()


# -- damaged or foreign files -----------------------------------------------------------------


def test_non_sqlite_file_is_corrupted(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    path.write_bytes(b"this is not a database, just some text " * 200)
    with pytest.raises(StoreCorrupted, match=r"g\.sqlite"):
        SQLiteGraphStore(path)


def run_sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def test_foreign_sqlite_file_is_corrupted(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    run_sql(path, "CREATE TABLE things (x)")
    with pytest.raises(StoreCorrupted, match="not a GraphFuse graph store"):
        SQLiteGraphStore(path)


async def test_truncated_file_is_corrupted(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    s = SQLiteGraphStore(path)
    await s.store_documents([Document(f"d{i}", "x" * 500) for i in range(500)])
    await s.close()
    run_sql(path, "PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])

    async def read_everything() -> None:
        s = SQLiteGraphStore(path)
        try:
            await s.get_documents([f"d{i}" for i in range(500)])
            await s.related(["d1"])
        finally:
            await s.close()

    with pytest.raises(StoreCorrupted):
        await read_everything()


def test_directory_path_is_corrupted(tmp_path: Path) -> None:
    with pytest.raises(StoreCorrupted, match="directory"):
        SQLiteGraphStore(tmp_path)


def test_newer_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    SQLiteGraphStore(path)._db.close()
    run_sql(path, "PRAGMA user_version = 99")
    with pytest.raises(StoreCorrupted, match="version 99"):
        SQLiteGraphStore(path)


# -- semantics shared by both stores ------------------------------------------------------------


async def test_bad_inputs(store: Store) -> None:
    await store.store_documents(docs("a", "b"))
    with pytest.raises(InvalidInput):
        await store.store_documents(Document("a"))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        await store.get_documents("a")  # a string is not a list of ids
    with pytest.raises(InvalidInput):
        await store.related(["a"], limit=-1)
    with pytest.raises(InvalidInput):
        await store.related(["a"], depth=True)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        await store.related(["a"], relation_types="CITES")
    with pytest.raises(InvalidInput):
        await store.related(["a"], filter={"tenant": {"$regex": "x"}})
    with pytest.raises(InvalidInput):
        await store.create_relations([Relation("a", "b", metadata={"x": object()})])
    with pytest.raises(NotFound):
        await store.get_document("zzz")
    assert await store.related(["a"], depth=1) == []


async def test_recreating_a_relation_updates_its_weight(store: Store) -> None:
    await store.store_documents(docs("a", "b", "c"))
    await store.create_relations([Relation("a", "b", weight=1.0), Relation("a", "c", weight=1.0)])
    even = await store.pagerank(["b", "c"])
    assert even["b"] == pytest.approx(even["c"])
    await store.create_relations([Relation("a", "b", weight=9.0)])
    skewed = await store.pagerank(["b", "c"])
    assert skewed["b"] > skewed["c"]


async def test_related_ties_are_ordered_by_id_and_limit_keeps_the_closest(store: Store) -> None:
    await store.store_documents(docs("s", "n3", "n1", "n2", "far"))
    await store.create_relations([Relation("s", "n3"), Relation("n1", "s"), Relation("s", "n2"), Relation("n2", "far")])
    assert [r.id for r in await store.related(["s"], depth=2)] == ["n1", "n2", "n3", "far"]
    assert [r.id for r in await store.related(["s"], depth=2, limit=2)] == ["n1", "n2"]
    assert await store.related(["s"], depth=2, limit=0) == []


async def test_seed_is_the_first_seed_at_the_smallest_distance(store: Store) -> None:
    await store.store_documents(docs("a", "b", "m", "far"))
    await store.create_relations([Relation("a", "m"), Relation("b", "m"), Relation("m", "far")])
    by_id = {r.id: r for r in await store.related(["b", "a"], depth=2)}
    assert (by_id["m"].distance, by_id["m"].seed) == (1, "b")
    assert (by_id["far"].distance, by_id["far"].seed) == (2, "b")
    # Duplicate and unknown seeds are ignored.
    assert {r.id for r in await store.related(["a", "a", "ghost"], depth=1)} == {"m"}


async def test_filter_with_ranges_and_missing_keys_on_every_hop(store: Store) -> None:
    await store.store_documents(
        [
            Document("s", "x", {"year": 2020}),
            Document("old", "x", {"year": 1990}),
            Document("new", "x", {"year": 2024}),
            Document("bare", "x", {}),
            Document("behind_old", "x", {"year": 2025}),
            Document("behind_bare", "x", {"year": 2025}),
        ]
    )
    await store.create_relations(
        [
            Relation("s", "old"),
            Relation("s", "new"),
            Relation("s", "bare"),
            Relation("old", "behind_old"),
            Relation("bare", "behind_bare"),
        ]
    )
    got = {r.id: r.distance for r in await store.related(["s"], depth=3, filter={"year": {"$gte": 2000}})}
    assert got == {"new": 1}
    got = {r.id: r.distance for r in await store.related(["s"], depth=3, filter={"year": {"$ne": 1990}})}
    assert got == {"new": 1, "bare": 1, "behind_bare": 2}


async def test_concurrent_tasks_and_threads(store: Store) -> None:
    await store.store_documents(docs(*(f"n{i}" for i in range(50))))

    async def writer(k: int) -> None:
        await store.create_relations([Relation(f"n{k}", f"n{k + 1}")])

    async def reader() -> None:
        for _ in range(5):
            for r in await store.related(["n0"], depth=3):
                assert 1 <= r.distance <= 3

    await asyncio.gather(*(writer(k) for k in range(49)), *(reader() for _ in range(5)))
    errors: list[BaseException] = []

    def in_thread(k: int) -> None:
        try:
            asyncio.run(store.store_documents(docs(f"t{k}")))
            asyncio.run(store.related([f"n{k}"], depth=2))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=in_thread, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(await store.get_documents([f"t{k}" for k in range(8)])) == 8
    assert [(r.id, r.distance) for r in await store.related(["n0"], depth=3)] == [("n1", 1), ("n2", 2), ("n3", 3)]


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_traversal_and_pagerank_match_networkx_on_random_graphs(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    n = 60
    ids = [f"v{i:02d}" for i in range(n)]
    tenants = {i: rng.choice(["a", "b"]) for i in ids}
    await store.store_documents([Document(i, "x", {"tenant": tenants[i]}) for i in ids])
    edges = {(rng.choice(ids), rng.choice(ids), rng.choice(["X", "Y"])) for _ in range(150)}
    edges = {e for e in edges if e[0] != e[1]}
    await store.create_relations([Relation(s, t, typ) for s, t, typ in edges])

    def expected(seeds: list[str], depth: int, allowed: set[str], types: set[str]) -> dict[str, int]:
        graph = nx.Graph()
        graph.add_nodes_from(ids)
        graph.add_edges_from(
            (s, t)
            for s, t, typ in edges
            if typ in types and (s in allowed or s in seeds) and (t in allowed or t in seeds)
        )
        found: dict[str, int] = {}
        for seed_id in seeds:
            for node, d in nx.single_source_shortest_path_length(graph, seed_id, cutoff=depth).items():
                if node not in seeds and node in allowed:
                    found[node] = min(d, found.get(node, d))
        return found

    for _ in range(10):
        seeds = rng.sample(ids, rng.randint(1, 4))
        depth = rng.randint(1, 3)
        assert {r.id: r.distance for r in await store.related(seeds, depth=depth)} == expected(
            seeds, depth, set(ids), {"X", "Y"}
        )
        assert {r.id: r.distance for r in await store.related(seeds, depth=depth, relation_types=["X"])} == expected(
            seeds, depth, set(ids), {"X"}
        )
        allowed = {i for i in ids if tenants[i] == "a"}
        got = {r.id: r.distance for r in await store.related(seeds, depth=depth, filter={"tenant": "a"})}
        # Seeds are expanded even when they do not match; other nodes must match to be passed through.
        assert got == expected(seeds, depth, allowed, {"X", "Y"})

    digraph = nx.DiGraph()
    digraph.add_nodes_from(ids)
    digraph.add_edges_from((s, t) for s, t, _ in edges)
    weights = nx.DiGraph()
    weights.add_nodes_from(ids)
    for s, t, _ in edges:  # parallel relations of two types add up, as in the store
        w = weights.get_edge_data(s, t, {"weight": 0.0})["weight"]
        weights.add_edge(s, t, weight=w + 1.0)
    reference = nx.pagerank(weights, alpha=0.85, tol=1e-10)
    top = max(reference.values())
    ours = await store.pagerank()
    for i in ids:
        assert ours[i] == pytest.approx(reference[i] / top, abs=1e-4)
