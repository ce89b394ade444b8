"""Neo4jGraphStore: the contract suite on a real server (when GRAPHFUSE_NEO4J_URI is set), and,
without one, the store's transaction logic on a scripted session, error mapping with the
driver's real exception classes, the scipy PageRank fallback and the registered factory."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import neo4j.exceptions as neo4j_errors
import networkx as nx
import pytest
from graphfuse_neo4j import Neo4jGraphStore
from graphfuse_neo4j._pagerank import pagerank_from_edges
from graphfuse_neo4j._plugin import make_neo4j_graph_store
from graphfuse_neo4j._store import translate_error

from graphfuse import (
    AuthenticationFailed,
    ConnectionFailed,
    DeadlineExceeded,
    Document,
    DocumentListing,
    GraphStore,
    InvalidInput,
    NotFound,
    PageRankRefreshing,
    Query,
    Relation,
    deadline,
)
from graphfuse.stages import PageRank
from graphfuse.stores import InMemoryGraphStore
from graphfuse.testing import GraphStoreContract

NEO4J_URI = os.environ.get("GRAPHFUSE_NEO4J_URI")


@pytest.mark.skipif(
    NEO4J_URI is None, reason="GRAPHFUSE_NEO4J_URI is not set: the Neo4j contract suite needs a Neo4j server"
)
class TestNeo4jGraphStoreContract(GraphStoreContract):
    @pytest.fixture
    async def graph_store(self) -> AsyncIterator[Neo4jGraphStore]:
        # A fresh label per test isolates tests that share one database.
        label = f"GraphFuseTest_{uuid.uuid4().hex}"
        store = make_neo4j_graph_store(label=label)
        yield store
        await store._session_run("cleanup", _cleanup(label), write=True)
        await store.close()

    async def test_pagerank_is_stored_on_the_documents(self, graph_store: Neo4jGraphStore) -> None:
        await graph_store.store_documents([Document(i) for i in ("hub", "l1", "l2", "alone")])
        await graph_store.create_relations([Relation("l1", "hub"), Relation("l2", "hub")])
        assert await _stored(graph_store) == ({}, 2, None)
        scores = await graph_store.pagerank(["hub"])
        stored, generation, ranked_at = await _stored(graph_store)
        assert scores == {"hub": 1.0}
        assert set(stored) == {"hub", "l1", "l2", "alone"}
        assert stored["hub"] == 1.0
        assert ranked_at == generation == 2
        assert await graph_store.generation() == 2  # storing the scores is no document write
        # A write marks them stale; the next call recomputes and stores them again.
        await graph_store.create_relations([Relation("alone", "l1")])
        assert (await _stored(graph_store))[1:] == (3, 2)
        after = await graph_store.pagerank()
        stored, generation, ranked_at = await _stored(graph_store)
        assert stored == after
        assert ranked_at == generation == 3
        assert after["l1"] > after["l2"]  # l1 gained an in-link

    async def test_refresh_pagerank_on_demand(self, graph_store: Neo4jGraphStore) -> None:
        await graph_store.store_documents([Document("a"), Document("b")])
        await graph_store.create_relations([Relation("a", "b")])
        await graph_store.refresh_pagerank()
        stored, _, ranked_at = await _stored(graph_store)
        assert ranked_at == 2
        assert stored["b"] == 1.0
        assert 0.0 < stored["a"] < 1.0


async def _stored(store: Neo4jGraphStore) -> tuple[dict[str, float], int, int | None]:
    """The stored scores, the generation and the generation they were computed at, read directly."""

    async def work(tx: Any) -> tuple[dict[str, float], int, int | None]:
        rows = [
            r.data()
            async for r in await tx.run(f"MATCH (d:`{store.label}`) RETURN d.id AS id, d.graphfuse_pagerank AS s")
        ]
        result = await tx.run(
            "OPTIONAL MATCH (m:GraphFuseMeta {label: $label}) RETURN m.generation AS g, m.pagerank_generation AS r",
            {"label": store.label},
        )
        meta = (await result.single(strict=True)).data()
        return {r["id"]: r["s"] for r in rows if r["s"] is not None}, meta["g"] or 0, meta["r"]

    return await store._session_run("inspect", work, write=False)


def _cleanup(label: str) -> Callable[[Any], Any]:
    async def work(tx: Any) -> None:
        await (await tx.run(f"MATCH (d:`{label}`) DETACH DELETE d")).consume()
        await (await tx.run("MATCH (m:GraphFuseMeta {label: $label}) DELETE m", {"label": label})).consume()
        await (await tx.run(f"DROP CONSTRAINT `graphfuse_{label.lower()}_id` IF EXISTS")).consume()

    return work


# -- a scripted driver: records every statement, answers from a function --------------------


class _Result:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows

    def __aiter__(self) -> AsyncIterator[Any]:
        async def gen() -> AsyncIterator[Any]:
            for row in self._rows:
                yield type("Record", (), {"data": lambda self, r=row: dict(r)})()

        return gen()

    async def consume(self) -> None:
        return None


class _Session:
    def __init__(self, driver: _Driver) -> None:
        self.driver = driver

    async def __aenter__(self) -> _Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def run(self, query: str, params: dict[str, Any] | None = None) -> _Result:
        self.driver.log.append(("auto", query, params or {}))
        return _Result([])

    async def _tx(self, kind: str, work: Callable[[Any], Any]) -> Any:
        if self.driver.delay:
            await asyncio.sleep(self.driver.delay)
        if self.driver.error is not None:
            raise self.driver.error
        session = self

        class Tx:
            async def run(self, query: str, params: dict[str, Any] | None = None) -> _Result:
                session.driver.log.append((kind, query, params or {}))
                return _Result(session.driver.answer(query, params or {}))

        return await work(Tx())

    async def execute_write(self, work: Callable[[Any], Any]) -> Any:
        return await self._tx("write", work)

    async def execute_read(self, work: Callable[[Any], Any]) -> Any:
        return await self._tx("read", work)


class _Driver:
    def __init__(self, answer: Callable[[str, dict[str, Any]], list[dict[str, Any]]]) -> None:
        self.answer = answer
        self.log: list[tuple[str, str, dict[str, Any]]] = []
        self.error: BaseException | None = None
        self.delay = 0.0
        self.closed = False

    def session(self, database: str | None = None) -> _Session:
        return _Session(self)

    async def close(self) -> None:
        self.closed = True


@pytest.fixture
async def scripted() -> AsyncIterator[tuple[Neo4jGraphStore, _Driver]]:
    store = Neo4jGraphStore("neo4j://127.0.0.1:1", batch_size=2, use_gds=False)
    real = store._driver
    driver = _Driver(lambda q, p: [])
    store._driver = driver  # type: ignore[assignment]
    yield store, driver
    await store.close()
    await real.close()


async def test_schema_is_created_once(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    await store.store_documents([Document("a")])
    await store.store_documents([Document("b")])
    ddl = [q for kind, q, _ in driver.log if kind == "auto"]
    assert ddl == [
        "CREATE CONSTRAINT `graphfuse_graphfusedocument_id` IF NOT EXISTS "
        "FOR (d:`GraphFuseDocument`) REQUIRE d.id IS UNIQUE",
        "CREATE CONSTRAINT `graphfuse_meta_label` IF NOT EXISTS FOR (m:`GraphFuseMeta`) REQUIRE m.label IS UNIQUE",
    ]


async def test_store_documents_batches_in_one_transaction(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    await store.store_documents([Document(f"d{i}") for i in range(5)])
    writes = [p for kind, _, p in driver.log if kind == "write"]
    assert [[r["id"] for r in p["rows"]] for p in writes[:-1]] == [["d0", "d1"], ["d2", "d3"], ["d4"]]
    assert writes[-1] == {"label": "GraphFuseDocument"}  # (the generation, counted last)


async def test_invalid_batch_sends_nothing(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    with pytest.raises(InvalidInput):
        await store.store_documents([Document("a"), Document("a")])
    with pytest.raises(InvalidInput):
        await store.create_relations([Relation("a", "b"), Relation("b", "b")])
    assert driver.log == []


async def test_relation_to_missing_document_merges_nothing(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    driver.answer = lambda q, p: [{"missing": ["ghost"]}] if "AS missing" in q else []
    with pytest.raises(NotFound, match="ghost"):
        await store.create_relations([Relation("a", "b"), Relation("a", "ghost")])
    assert not any("MERGE" in q for _, q, _ in driver.log)


async def test_create_relations_checks_then_merges(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    driver.answer = lambda q, p: [{"missing": []}] if "AS missing" in q else []
    await store.create_relations([Relation("a", "b", "X"), Relation("b", "c", "X"), Relation("c", "d", "X")])
    writes = [(q, p) for kind, q, p in driver.log if kind == "write"]
    assert "AS missing" in writes[0][0]
    assert writes[0][1] == {"ids": ["a", "b", "c", "d"]}
    assert [len(p["rows"]) for q, p in writes[1:-1]] == [2, 1]
    assert all("MERGE (s)-[r:`X`]->(t)" in q for q, _ in writes[1:-1])
    assert "SET m.generation" in writes[-1][0]


async def test_every_write_that_changes_something_moves_the_generation_in_its_transaction(
    scripted: tuple[Neo4jGraphStore, _Driver],
) -> None:
    store, driver = scripted
    deleted = {"n": 1}

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "AS missing" in query:
            return [{"missing": ["ghost"] if "ghost" in params["ids"] else []}]
        if "AS deleted" in query:
            return [{"deleted": deleted["n"]}]
        if "AS generation" in query:
            return [{"generation": 7}]
        return []

    driver.answer = answer

    def bumps() -> list[str]:
        out = [kind for kind, q, _ in driver.log if "SET m.generation" in q]
        driver.log.clear()
        return out

    await store.store_documents([Document("a"), Document("b")])
    assert bumps() == ["write"]
    await store.create_relations([Relation("a", "b")])
    assert bumps() == ["write"]
    assert await store.delete_relations([Relation("a", "b")]) == 1
    assert bumps() == ["write"]
    assert await store.delete_documents(["a"]) == 1
    assert bumps() == ["write"]
    # Nothing changed, nothing counted: a refused write, deletes of what does not exist.
    with pytest.raises(NotFound):
        await store.create_relations([Relation("a", "ghost")])
    deleted["n"] = 0
    assert await store.delete_documents(["zzz"]) == 0
    assert await store.delete_relations([Relation("a", "zzz")]) == 0
    assert bumps() == []
    assert await store.generation() == 7
    assert [(kind, p) for kind, q, p in driver.log if "AS generation" in q] == [
        ("read", {"label": "GraphFuseDocument"})
    ]


async def test_reads_and_deletes(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "AS deleted" in query:
            return [{"deleted": 1}]
        if query.startswith("MATCH (d:`GraphFuseDocument`)\nWHERE d.id IN $ids") and params["ids"] == ["a"]:
            return [{"id": "a", "content": "x", "metadata": '{"t": 1}', "created_at": None, "updated_at": None}]
        if "best.distance" in query:
            return [{"id": "b", "distance": 1, "seed": "a"}]
        return []

    driver.answer = answer
    assert (await store.get_document("a")).metadata == {"t": 1}
    with pytest.raises(NotFound):
        await store.get_document("zzz")
    assert await store.delete_documents(["a"]) == 1
    assert await store.delete_relations([Relation("a", "b", "X"), Relation("a", "c", "Y")]) == 2
    related = await store.related(["a"], depth=2, filter={"t": 1})
    assert [(r.id, r.distance, r.seed) for r in related] == [("b", 1, "a")]
    assert await store.related([], depth=2) == []
    assert await store.related(["a"], limit=0) == []


async def test_iter_documents_reads_pages_after_the_last_id(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    ids = ["a", "b", "c", "d", "e"]

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "ORDER BY d.id" not in query:
            return []
        after = params["after"]
        page = [i for i in ids if after is None or i > after][: params["size"]]
        return [{"id": i, "content": i * 2, "metadata": "{}", "created_at": None, "updated_at": None} for i in page]

    driver.answer = answer
    assert isinstance(store, DocumentListing)
    got = [d async for d in store.iter_documents(batch_size=2)]
    assert [(d.id, d.content) for d in got] == [(i, i * 2) for i in ids]
    pages = [(kind, params) for kind, query, params in driver.log if "ORDER BY d.id" in query]
    # Three pages of at most two, each in its own read transaction, each after the last id seen.
    assert pages == [
        ("read", {"after": None, "size": 2}),
        ("read", {"after": "b", "size": 2}),
        ("read", {"after": "d", "size": 2}),
    ]
    driver.log.clear()
    assert [d.id async for d in store.iter_documents(filter={"tenant": "t1"}, batch_size=10)] == ids
    assert driver.log[-1][2] == {"after": None, "size": 10, "f2": "t1"}  # the filter runs in the server


async def test_multihop_corpus_indexes_are_built_from_the_store(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    from graphfuse.multihop import acorpus_indexes

    store, driver = scripted
    rows = [
        {"id": "berg", "content": "Anna Berg was born in Oslo.", "metadata": '{"title": "Anna Berg"}'},
        {"id": "film", "content": "The Quiet Harbour was directed by Anna Berg.", "metadata": '{"title": "Harbour"}'},
        {"id": "oslo", "content": "Oslo is the capital of Norway.", "metadata": '{"title": "Oslo"}'},
    ]

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "ORDER BY d.id" not in query:
            return []
        page = [r for r in rows if params["after"] is None or r["id"] > params["after"]][: params["size"]]
        return [{**r, "created_at": None, "updated_at": None} for r in page]

    driver.answer = answer
    bm25, linker = await acorpus_indexes(store, batch_size=2)
    assert bm25.search("Who directed The Quiet Harbour?", 1)[0][0] == "film"
    assert [m.targets for m in linker.extract("a film by Anna Berg")] == [("berg",)]


@pytest.mark.parametrize("batch_size", [0, -1, True, 2.5, "10"])
async def test_iter_documents_refuses_bad_arguments_before_reading(
    scripted: tuple[Neo4jGraphStore, _Driver], batch_size: Any
) -> None:
    store, driver = scripted
    with pytest.raises(InvalidInput, match="batch_size"):
        store.iter_documents(batch_size=batch_size)
    with pytest.raises(InvalidInput):
        store.iter_documents(filter={"tenant": {"$bogus": 1}})
    assert driver.log == []


async def test_pagerank_fallback_from_streamed_relations(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if query.endswith("RETURN d.id AS id"):
            return [{"id": i} for i in ("hub", "l1", "l2", "alone")]
        if "AS weight" in query:
            return [{"source": leaf, "target": "hub", "weight": 1.0} for leaf in ("l1", "l2")]
        return []

    driver.answer = answer
    scores = await store.pagerank()
    assert scores["hub"] == 1.0
    assert set(scores) == {"hub", "l1", "l2", "alone"}
    assert await store.pagerank(["l1", "nope"]) == {"l1": scores["l1"]}
    assert not any("gds" in q for _, q, _ in driver.log)


async def test_gds_is_used_when_detected(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    store._use_gds = None

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "gds.pageRank.stream" in query:
            return [{"id": "hub", "score": 2.0}, {"id": "leaf", "score": 0.5}]
        if "gds.graph.project" in query:
            return [{"nodes": 2}]
        return [{"gdsVersion": "2.6.0"}] if "gds.version" in query else []

    driver.answer = answer
    assert await store.pagerank() == {"hub": 1.0, "leaf": 0.25}
    queries = [q for _, q, _ in driver.log]
    assert any("gds.graph.project" in q for q in queries)
    assert any("gds.graph.drop" in q for q in queries)


async def test_gds_missing_falls_back_to_scipy(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    store._use_gds = None

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "gds.version" in query:
            raise neo4j_errors.ClientError("There is no procedure with the name `gds.version` registered")
        return []

    driver.answer = answer
    assert await store.pagerank() == {}
    assert store._use_gds is False


class _StoredPageRank:
    """Answers the stored-PageRank statements from a small model of the database."""

    def __init__(self, nodes: list[str], edges: list[tuple[str, str, float]]) -> None:
        self.nodes = nodes
        self.edges = edges
        self.generation = 1
        self.ranked_at: int | None = None
        self.scores: dict[str, float] = {}
        self.after_edges: Callable[[], None] = lambda: None

    def __call__(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "AS ranked_at" in query:
            return [{"generation": self.generation, "ranked_at": self.ranked_at}]
        if query.endswith("RETURN d.id AS id"):
            return [{"id": i} for i in self.nodes]
        if "AS weight" in query:
            rows = [{"source": s, "target": t, "weight": w} for s, t, w in self.edges]
            self.after_edges()
            return rows
        if "SET d.`graphfuse_pagerank`" in query:
            self.scores.update({r["id"]: r["score"] for r in params["rows"]})
            return []
        if "SET m.pagerank_generation" in query:
            self.ranked_at = params["generation"]
            return []
        if "AS score" in query:
            ids = params.get("ids", self.nodes)
            return [{"id": i, "score": self.scores[i]} for i in ids if i in self.scores]
        if "SET m.generation" in query:
            self.generation += 1
        if "SET d = row" in query:
            self.nodes += [r["id"] for r in params["rows"] if r["id"] not in self.nodes]
            for r in params["rows"]:
                self.scores.pop(r["id"], None)
        return []


def _kinds(driver: _Driver, what: str) -> list[str]:
    return [kind for kind, q, _ in driver.log if what in q]


async def test_pagerank_is_stored_then_read_by_id(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    model = _StoredPageRank(["hub", "l1", "l2", "alone"], [("l1", "hub", 1.0), ("l2", "hub", 1.0)])
    driver.answer = model
    scores = await store.pagerank()
    assert scores["hub"] == 1.0
    assert set(scores) == {"hub", "l1", "l2", "alone"}
    # Stale (never computed): one refresh, stored in one write transaction (batch_size 2) and marked.
    assert _kinds(driver, "AS weight") == ["read"]
    assert [len(p["rows"]) for _, q, p in driver.log if "SET d.`graphfuse_pagerank`" in q] == [2, 2]
    assert _kinds(driver, "SET d.`graphfuse_pagerank`") == ["write", "write"]
    assert [p for _, q, p in driver.log if "SET m.pagerank_generation" in q] == [
        {"label": "GraphFuseDocument", "generation": 1}
    ]
    assert model.scores == scores
    assert model.ranked_at == 1
    # Fresh: the next call is one read transaction, the status then a lookup of the ids.
    driver.log.clear()
    assert await store.pagerank(["l1", "nope", "hub"]) == {"l1": scores["l1"], "hub": 1.0}
    assert [(kind, p) for kind, _, p in driver.log] == [
        ("read", {"label": "GraphFuseDocument"}),
        ("read", {"ids": ["l1", "nope", "hub"]}),
    ]
    assert "UNWIND $ids AS id" in driver.log[1][1]


async def test_the_pagerank_stage_reads_the_stored_scores(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    model = _StoredPageRank(["hub", "l1", "l2"], [("l1", "hub", 1.0), ("l2", "hub", 1.0)])
    driver.answer = model
    await store.refresh_pagerank()
    driver.log.clear()
    stage = PageRank(store)
    values = await stage.signal_values(Query("q"), ["l1", "hub", "gone"], ["l1", "hub", "gone"])
    assert values == [model.scores["l1"], 1.0, 0.5]  # a document without a score gets the default
    # One read transaction: the freshness check and one lookup for the candidate ids.
    assert [(kind, p) for kind, _, p in driver.log] == [
        ("read", {"label": "GraphFuseDocument"}),
        ("read", {"ids": ["l1", "hub", "gone"]}),
    ]


async def test_a_write_marks_pagerank_stale_and_the_next_call_refreshes(
    scripted: tuple[Neo4jGraphStore, _Driver],
) -> None:
    store, driver = scripted
    model = _StoredPageRank(["a", "b"], [("a", "b", 1.0)])
    driver.answer = model
    before = await store.pagerank()
    await store.store_documents([Document("c")])
    model.edges.append(("c", "b", 1.0))
    assert model.ranked_at == 1
    assert model.generation == 2
    driver.log.clear()
    after = await store.pagerank(["a", "b", "c"])
    assert _kinds(driver, "AS weight") == ["read"]
    assert model.ranked_at == 2
    assert set(after) == {"a", "b", "c"}
    assert after["a"] < before["a"]  # b gained an in-link: a's share of the mass fell
    driver.log.clear()
    assert await store.pagerank(["c"]) == {"c": after["c"]}
    assert _kinds(driver, "AS weight") == []


async def test_scores_computed_during_a_write_are_returned_not_stored(
    scripted: tuple[Neo4jGraphStore, _Driver],
) -> None:
    store, driver = scripted
    model = _StoredPageRank(["a", "b"], [("a", "b", 1.0)])

    def concurrent_write() -> None:
        model.generation += 1

    model.after_edges = concurrent_write
    driver.answer = model
    scores = await store.pagerank()
    assert scores["b"] == 1.0
    assert _kinds(driver, "SET d.`graphfuse_pagerank`") == []
    assert model.ranked_at is None
    model.after_edges = lambda: None
    await store.refresh_pagerank()
    assert model.ranked_at == 2
    assert model.scores == scores


async def test_a_read_only_user_gets_computed_scores(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    model = _StoredPageRank(["a", "b"], [("a", "b", 1.0)])

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "SET d.`graphfuse_pagerank`" in query:
            raise neo4j_errors.Forbidden("Write operations are not allowed for user 'reader'")
        return model(query, params)

    driver.answer = answer
    assert (await store.pagerank(["b"])) == {"b": 1.0}
    assert model.ranked_at is None
    with pytest.raises(AuthenticationFailed, match="not allowed"):
        await store.refresh_pagerank()


async def test_concurrent_stale_calls_refresh_once(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    model = _StoredPageRank(["a", "b", "c"], [("a", "b", 1.0), ("c", "b", 2.0)])
    driver.answer = model
    results = await asyncio.gather(*(store.pagerank(["b"]) for _ in range(5)))
    assert results == [{"b": 1.0}] * 5
    assert len(_kinds(driver, "AS weight")) == 1


async def test_gds_refresh_is_stored_too(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    store._use_gds = True
    model = _StoredPageRank(["hub", "leaf"], [])

    def answer(query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if "gds.pageRank.stream" in query:
            return [{"id": "hub", "score": 2.0}, {"id": "leaf", "score": 0.5}]
        if "gds.graph.project" in query:
            return [{"nodes": 2}]
        return model(query, params)

    driver.answer = answer
    await store.refresh_pagerank()
    assert model.scores == {"hub": 1.0, "leaf": 0.25}
    assert model.ranked_at == 1
    # The generation is read in the projecting transaction, before the projection.
    gds_tx = [q for kind, q, _ in driver.log if kind == "write"]
    assert "AS ranked_at" in gds_tx[0]
    assert "gds.graph.project" in gds_tx[1]
    driver.log.clear()
    assert await store.pagerank(["leaf"]) == {"leaf": 0.25}
    assert not any("gds" in q for _, q, _ in driver.log)


async def test_deadline_stops_a_slow_transaction(scripted: tuple[Neo4jGraphStore, _Driver]) -> None:
    store, driver = scripted
    driver.delay = 30.0
    with deadline(0.2), pytest.raises(DeadlineExceeded):
        await store.get_documents(["a"])


# -- error mapping (the driver's real exception classes) ---------------------------------


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (neo4j_errors.ServiceUnavailable("down"), ConnectionFailed),
        (neo4j_errors.SessionExpired("gone"), ConnectionFailed),
        (neo4j_errors.TransientError("deadlock"), ConnectionFailed),
        (neo4j_errors.AuthError("bad password"), AuthenticationFailed),
        (neo4j_errors.Forbidden("no rights"), AuthenticationFailed),
        (neo4j_errors.CypherSyntaxError("syntax"), InvalidInput),
        (neo4j_errors.ConstraintError("unique"), InvalidInput),
        (neo4j_errors.DatabaseError("disk"), ConnectionFailed),
    ],
)
async def test_driver_errors_are_mapped(
    scripted: tuple[Neo4jGraphStore, _Driver], error: Exception, expected: type[Exception]
) -> None:
    store, driver = scripted
    assert isinstance(translate_error(error, "op"), expected)
    driver.error = error
    with pytest.raises(expected) as info:
        await store.get_documents(["a"])
    assert info.value.__cause__ is error


async def test_unreachable_server_raises_connection_failed() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = Neo4jGraphStore(f"bolt://127.0.0.1:{port}", user="neo4j", password="x", connection_timeout=2)
    try:
        with pytest.raises(ConnectionFailed):
            await store.get_documents(["a"])
    finally:
        await store.close()


async def test_closed_store_raises_and_close_is_idempotent() -> None:
    store = Neo4jGraphStore("neo4j://127.0.0.1:7687", create_schema=False)
    await store.close()
    await store.close()
    with pytest.raises(ConnectionFailed, match="closed"):
        await store.get_documents(["a"])
    with pytest.raises(ConnectionFailed, match="closed"):
        store.iter_documents()


def test_constructor_validation() -> None:
    with pytest.raises(InvalidInput):
        Neo4jGraphStore("localhost:7687")
    with pytest.raises(InvalidInput):
        Neo4jGraphStore("neo4j://h", label="Bad Label")
    with pytest.raises(InvalidInput):
        Neo4jGraphStore("neo4j://h", batch_size=0)
    with pytest.raises(InvalidInput):
        Neo4jGraphStore("neo4j://h", connection_timeout=0)
    with pytest.raises(InvalidInput):
        Neo4jGraphStore("ftp://h")


async def test_is_a_graph_store() -> None:
    store = Neo4jGraphStore("neo4j://127.0.0.1:7687")
    try:
        assert isinstance(store, GraphStore)
        assert isinstance(store, PageRankRefreshing)  # the Indexer refreshes it after a run
    finally:
        await store.close()


# -- scipy PageRank fallback ---------------------------------------------------------------


def test_pagerank_from_edges_matches_networkx() -> None:
    rng = random.Random(7)
    nodes = [f"n{i}" for i in range(60)]
    edges = {(rng.choice(nodes), rng.choice(nodes)) for _ in range(200)}
    weighted = [(s, t, rng.uniform(0.5, 2.0)) for s, t in edges if s != t]
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_weighted_edges_from(weighted)
    expected = nx.pagerank(graph, weight="weight")
    top = max(expected.values())
    got = pagerank_from_edges(nodes, weighted)
    assert set(got) == set(nodes)
    for node in nodes:
        assert got[node] == pytest.approx(expected[node] / top, abs=1e-4)
    assert max(got.values()) == pytest.approx(1.0)


async def test_pagerank_from_edges_matches_the_embedded_store() -> None:
    # The refresh's driver-side computation, run on edges in process, against InMemoryGraphStore.
    nodes = ["a", "b", "c", "d", "e", "alone"]
    edges = [("a", "b", 1.0), ("b", "c", 2.0), ("c", "a", 1.0), ("d", "c", 0.5), ("e", "d", 1.5), ("a", "c", 1.0)]
    embedded = InMemoryGraphStore()
    await embedded.store_documents([Document(i) for i in nodes])
    await embedded.create_relations([Relation(s, t, weight=w) for s, t, w in edges])
    expected = await embedded.pagerank()
    got = pagerank_from_edges(nodes, edges)
    assert set(got) == set(expected) == set(nodes)
    for node in nodes:
        assert got[node] == pytest.approx(expected[node], abs=1e-9)


def test_pagerank_from_edges_edge_cases() -> None:
    assert pagerank_from_edges([], []) == {}
    assert pagerank_from_edges(["a"], [("a", "ghost", 1.0)]) == {"a": 1.0}


# -- the registered factory ---------------------------------------------------------------


async def test_factory_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHFUSE_NEO4J_URI", "neo4j://db.example:7687")
    monkeypatch.setenv("GRAPHFUSE_NEO4J_USER", "reader")
    monkeypatch.setenv("GRAPHFUSE_NEO4J_PASSWORD", "secret")
    monkeypatch.setenv("GRAPHFUSE_NEO4J_DATABASE", "docs")
    store = make_neo4j_graph_store(label="Doc")
    try:
        assert store.label == "Doc"
        assert store._database == "docs"
    finally:
        await store.close()
    monkeypatch.delenv("GRAPHFUSE_NEO4J_URI")
    with pytest.raises(InvalidInput, match="GRAPHFUSE_NEO4J_URI"):
        make_neo4j_graph_store()


async def test_registered_as_a_plugin() -> None:
    from graphfuse.plugins import get_registry

    store = get_registry().create("graph_store", "neo4j", uri="neo4j://127.0.0.1:7687")
    try:
        assert isinstance(store, Neo4jGraphStore)
    finally:
        await store.close()
