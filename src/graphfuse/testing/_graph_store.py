"""The :class:`GraphStoreContract` suite: every promise of :class:`graphfuse.GraphStore`."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import pytest

from .._core._capabilities import DocumentListing
from .._core._errors import InvalidInput, NotFound
from .._core._filters import MetadataFilter
from .._core._protocols import GraphStore
from .._core._types import Document, RelatedDocument, Relation
from ._filter_cases import random_filter, random_metadata

__all__ = ["GraphStoreContract"]


def _distances(related: Sequence[RelatedDocument]) -> dict[str, int]:
    ids = [r.id for r in related]
    assert len(ids) == len(set(ids)), f"related() returned an id twice: {ids}"
    return {r.id: r.distance for r in related}


async def _docs(store: GraphStore, *specs: str | tuple[str, dict[str, Any]]) -> None:
    docs = []
    for spec in specs:
        doc_id, metadata = (spec, {}) if isinstance(spec, str) else spec
        docs.append(Document(doc_id, f"content of {doc_id}", metadata))
    await store.store_documents(docs)


async def _chain(store: GraphStore, *ids: str, type: str = "RELATED") -> None:
    await _docs(store, *ids)
    await store.create_relations([Relation(a, b, type) for a, b in itertools.pairwise(ids)])


@pytest.mark.asyncio
class GraphStoreContract:
    """Subclass and provide an async ``graph_store`` fixture yielding an empty store.

    The fixture should close the store after the test. Every test builds its own data.
    """

    # -- documents ---------------------------------------------------------------------------

    async def test_filters_agree_with_the_reference(self, graph_store: GraphStore) -> None:
        """Differential: random tricky metadata and filters vs ``MetadataFilter.matches``.

        A document or filter the store refuses with ``InvalidInput`` is left out (a clear
        refusal is allowed); everything else must select exactly what the reference selects.
        """
        rng = random.Random(20260601)
        kept: dict[str, dict[str, Any]] = {}
        for i in range(40):
            metadata = random_metadata(rng)
            try:
                await graph_store.store_documents([Document(f"r{i}", f"text {i}", metadata)])
            except InvalidInput:
                continue
            kept[f"r{i}"] = metadata
        assert len(kept) >= 20, "the store refused most of the documents"
        wrong, refused = [], 0
        for _ in range(150):
            spec = random_filter(rng)
            try:
                found = await graph_store.get_documents(list(kept), filter=spec)  # type: ignore[arg-type]
            except InvalidInput:
                refused += 1
                continue
            flt = MetadataFilter.parse(spec)
            assert flt is not None
            expected = {k for k, md in kept.items() if flt.matches(md)}
            got = set(found)
            if got != expected:
                wrong.append(f"{spec}: extra {sorted(got - expected)}, missing {sorted(expected - got)}")
        assert not wrong, f"{len(wrong)} filters disagree with MetadataFilter.matches: " + "; ".join(wrong[:5])
        assert refused < 75, f"the store refused {refused} of 150 filters"

    async def test_store_and_get_round_trip(self, graph_store: GraphStore) -> None:
        created = datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=timezone.utc)
        updated = datetime(2024, 6, 7, 8, 9, 10, tzinfo=timezone.utc)
        metadata = {"tenant": "acme", "year": 2024, "score": 0.25, "draft": False, "tags": ["a", "b"]}
        doc = Document("doc-1", "hello wörld", metadata, created_at=created, updated_at=updated)
        await graph_store.store_documents([doc])
        got = await graph_store.get_document("doc-1")
        assert got.id == "doc-1"
        assert got.content == "hello wörld"
        assert dict(got.metadata) == metadata
        assert type(got.metadata["year"]) is int
        assert type(got.metadata["draft"]) is bool
        assert got.created_at == created
        assert got.updated_at == updated

    async def test_document_without_content_or_timestamps(self, graph_store: GraphStore) -> None:
        await graph_store.store_documents([Document("bare")])
        got = await graph_store.get_document("bare")
        assert got.content is None
        assert dict(got.metadata) == {}
        assert got.created_at is None
        assert got.updated_at is None

    async def test_unusual_ids_round_trip(self, graph_store: GraphStore) -> None:
        ids = ["a/b:c d", "ünïcødé-文書", "x" * 512, "'; DROP TABLE documents; --", "n}) DETACH DELETE n //"]
        await _docs(graph_store, *ids)
        got = await graph_store.get_documents(ids)
        assert set(got) == set(ids)
        for doc_id in ids:
            assert (await graph_store.get_document(doc_id)).id == doc_id

    async def test_store_replaces_by_id(self, graph_store: GraphStore) -> None:
        await graph_store.store_documents([Document("d", "old", {"v": 1, "gone": True})])
        await graph_store.store_documents([Document("d", "new", {"v": 2})])
        got = await graph_store.get_document("d")
        assert got.content == "new"
        assert dict(got.metadata) == {"v": 2}

    async def test_store_empty_batch_is_a_no_op(self, graph_store: GraphStore) -> None:
        await graph_store.store_documents([])
        assert await graph_store.get_documents(["anything"]) == {}

    async def test_duplicate_id_in_batch_writes_nothing(self, graph_store: GraphStore) -> None:
        batch = [Document("fresh", "x"), Document("dup", "1"), Document("dup", "2")]
        with pytest.raises(InvalidInput):
            await graph_store.store_documents(batch)
        assert await graph_store.get_documents(["fresh", "dup"]) == {}

    async def test_duplicate_id_does_not_touch_existing_documents(self, graph_store: GraphStore) -> None:
        await graph_store.store_documents([Document("kept", "original")])
        with pytest.raises(InvalidInput):
            await graph_store.store_documents([Document("kept", "changed"), Document("kept", "again")])
        assert (await graph_store.get_document("kept")).content == "original"

    async def test_non_document_in_batch_writes_nothing(self, graph_store: GraphStore) -> None:
        batch: list[Any] = [Document("fresh", "x"), {"id": "not-a-document"}]
        with pytest.raises(InvalidInput):
            await graph_store.store_documents(batch)
        assert await graph_store.get_documents(["fresh"]) == {}

    async def test_unserialisable_metadata_writes_nothing(self, graph_store: GraphStore) -> None:
        batch = [Document("fresh", "x"), Document("bad", "y", {"thing": object()})]
        with pytest.raises(InvalidInput):
            await graph_store.store_documents(batch)
        assert await graph_store.get_documents(["fresh", "bad"]) == {}

    async def test_get_document_missing_raises_not_found(self, graph_store: GraphStore) -> None:
        with pytest.raises(NotFound):
            await graph_store.get_document("missing")

    async def test_get_documents_omits_missing_ids(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "a", "b")
        got = await graph_store.get_documents(["a", "missing", "b"])
        assert set(got) == {"a", "b"}
        assert got["a"].content == "content of a"
        assert await graph_store.get_documents([]) == {}

    async def test_get_documents_filter_omits_non_matching(self, graph_store: GraphStore) -> None:
        await _docs(
            graph_store,
            ("a", {"tenant": "t1", "year": 2020}),
            ("b", {"tenant": "t2", "year": 2022}),
            ("c", {"tenant": "t1", "year": 2024}),
            ("d", {}),
        )
        ids = ["a", "b", "c", "d", "missing"]
        assert set(await graph_store.get_documents(ids, filter={"tenant": "t1"})) == {"a", "c"}  # type: ignore[arg-type]
        assert set(await graph_store.get_documents(ids, filter={"year": {"$gte": 2022}})) == {"b", "c"}  # type: ignore[arg-type]
        assert set(await graph_store.get_documents(ids, filter={"tenant": {"$ne": "t1"}})) == {"b", "d"}  # type: ignore[arg-type]
        assert set(await graph_store.get_documents(ids, filter={"tenant": {"$exists": False}})) == {"d"}  # type: ignore[arg-type]

    async def test_iter_documents_lists_each_document_once(self, graph_store: GraphStore) -> None:
        if not isinstance(graph_store, DocumentListing):
            pytest.skip("the store cannot list its documents (no iter_documents)")
        docs = [Document(f"d{i}", f"text {i}", {"tenant": "acme" if i % 2 else "globex"}) for i in range(7)]
        await graph_store.store_documents(docs)
        for batch_size in (1, 3, 7, 1000):
            listed = [d async for d in graph_store.iter_documents(batch_size=batch_size)]
            assert sorted(d.id for d in listed) == [d.id for d in docs], f"batch_size={batch_size}"
            assert {d.id: (d.content, dict(d.metadata)) for d in listed} == {
                d.id: (d.content, dict(d.metadata)) for d in docs
            }
        acme = [d.id async for d in graph_store.iter_documents(filter={"tenant": "acme"}, batch_size=2)]
        assert sorted(acme) == ["d1", "d3", "d5"]

    async def test_iter_documents_of_an_empty_store(self, graph_store: GraphStore) -> None:
        if not isinstance(graph_store, DocumentListing):
            pytest.skip("the store cannot list its documents (no iter_documents)")
        assert [d async for d in graph_store.iter_documents()] == []

    async def test_iter_documents_refuses_bad_arguments_before_reading(self, graph_store: GraphStore) -> None:
        if not isinstance(graph_store, DocumentListing):
            pytest.skip("the store cannot list its documents (no iter_documents)")
        for bad in (0, -1, True, 2.5):
            with pytest.raises(InvalidInput):
                graph_store.iter_documents(batch_size=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput):
            graph_store.iter_documents(filter={"tenant": {"$bogus": 1}})

    async def test_generation_moves_with_every_write(self, graph_store: GraphStore) -> None:
        generation = getattr(graph_store, "generation", None)
        if not callable(generation):
            pytest.skip("the store keeps no write generation")
        seen: list[int] = [int(await generation())]

        async def moved() -> bool:
            now = int(await generation())
            changed = now != seen[-1]
            seen.append(now)
            return changed

        await _docs(graph_store, "a", "b")
        assert await moved(), "store_documents"
        await graph_store.create_relations([Relation("a", "b", "X")])
        assert await moved(), "create_relations"
        await graph_store.delete_relations([Relation("a", "b", "X")])
        assert await moved(), "delete_relations"
        await graph_store.delete_documents(["a"])
        assert await moved(), "delete_documents"
        assert not await moved(), "a read moved the generation"
        assert len(set(seen)) == 5, f"a generation came back: {seen}"

    async def test_delete_documents_counts_existing(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "a", "b", "c")
        assert await graph_store.delete_documents(["a", "b", "missing"]) == 2
        assert set(await graph_store.get_documents(["a", "b", "c"])) == {"c"}
        with pytest.raises(NotFound):
            await graph_store.get_document("a")
        assert await graph_store.delete_documents(["a"]) == 0
        assert await graph_store.delete_documents([]) == 0

    async def test_delete_documents_removes_their_relations(self, graph_store: GraphStore) -> None:
        await _chain(graph_store, "a", "b", "c")
        await graph_store.delete_documents(["b"])
        assert await graph_store.related(["a"], depth=3) == []
        assert await graph_store.related(["c"], depth=3) == []
        # Re-creating the deleted document must not resurrect its old relations.
        await _docs(graph_store, "b")
        assert await graph_store.related(["b"], depth=1) == []
        assert await graph_store.delete_relations([Relation("a", "b")]) == 0

    async def test_concurrent_writes_all_land(self, graph_store: GraphStore) -> None:
        await asyncio.gather(*(graph_store.store_documents([Document(f"c{i}", str(i))]) for i in range(20)))
        got = await graph_store.get_documents([f"c{i}" for i in range(20)])
        assert len(got) == 20

    # -- relations ---------------------------------------------------------------------------

    async def test_create_relations_is_idempotent(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "a", "b")
        rel = Relation("a", "b", "CITES")
        await graph_store.create_relations([rel])
        await graph_store.create_relations([rel, rel])
        assert _distances(await graph_store.related(["a"], depth=1)) == {"b": 1}
        assert await graph_store.delete_relations([rel]) == 1
        assert await graph_store.related(["a"], depth=1) == []

    async def test_relation_identity_is_source_target_type(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "a", "b")
        await graph_store.create_relations([Relation("a", "b", "X"), Relation("a", "b", "Y"), Relation("b", "a", "X")])
        assert await graph_store.delete_relations([Relation("a", "b", "X")]) == 1
        assert _distances(await graph_store.related(["a"], depth=1)) == {"b": 1}
        assert await graph_store.delete_relations([Relation("a", "b", "Y"), Relation("b", "a", "X")]) == 2
        assert await graph_store.related(["a"], depth=1) == []

    async def test_delete_relations_counts_existing(self, graph_store: GraphStore) -> None:
        await _chain(graph_store, "a", "b")
        assert await graph_store.delete_relations([Relation("a", "b", "OTHER"), Relation("a", "missing")]) == 0
        assert await graph_store.delete_relations([]) == 0
        assert await graph_store.delete_relations([Relation("a", "b")]) == 1

    async def test_relation_to_missing_document_writes_nothing(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "a", "b")
        with pytest.raises(NotFound):
            await graph_store.create_relations([Relation("a", "b"), Relation("a", "missing")])
        with pytest.raises(NotFound):
            await graph_store.create_relations([Relation("missing", "a")])
        assert await graph_store.related(["a"], depth=1) == []
        assert await graph_store.get_documents(["missing"]) == {}

    async def test_self_loop_is_invalid_and_writes_nothing(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "a", "b")
        with pytest.raises(InvalidInput):
            await graph_store.create_relations([Relation("a", "b"), Relation("a", "a")])
        assert await graph_store.related(["a"], depth=1) == []

    async def test_create_empty_relations_is_a_no_op(self, graph_store: GraphStore) -> None:
        await graph_store.create_relations([])

    # -- traversal ---------------------------------------------------------------------------

    async def test_related_distances_by_depth(self, graph_store: GraphStore) -> None:
        await _chain(graph_store, "a", "b", "c", "d", "e")
        assert _distances(await graph_store.related(["a"], depth=1)) == {"b": 1}
        assert _distances(await graph_store.related(["a"], depth=2)) == {"b": 1, "c": 2}
        assert _distances(await graph_store.related(["a"], depth=3)) == {"b": 1, "c": 2, "d": 3}
        assert _distances(await graph_store.related(["a"])) == {"b": 1, "c": 2}, "default depth is 2"

    async def test_related_follows_both_directions(self, graph_store: GraphStore) -> None:
        await _chain(graph_store, "a", "b", "c")
        assert _distances(await graph_store.related(["c"], depth=2)) == {"b": 1, "a": 2}
        assert _distances(await graph_store.related(["b"], depth=1)) == {"a": 1, "c": 1}

    async def test_related_reports_seed(self, graph_store: GraphStore) -> None:
        await _chain(graph_store, "a", "b", "c")
        related = await graph_store.related(["a"], depth=2)
        assert {r.seed for r in related} == {"a"}
        await _chain(graph_store, "x", "y")
        by_id = {r.id: r for r in await graph_store.related(["a", "x"], depth=1)}
        assert by_id["b"].seed == "a"
        assert by_id["y"].seed == "x"

    async def test_related_excludes_seeds(self, graph_store: GraphStore) -> None:
        await _chain(graph_store, "a", "b", "c", "d")
        assert _distances(await graph_store.related(["a", "b"], depth=1)) == {"c": 1}
        assert _distances(await graph_store.related(["a", "c"], depth=2)) == {"b": 1, "d": 1}

    async def test_related_smallest_distance_over_cycles(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "a", "b", "c", "d")
        await graph_store.create_relations(
            [Relation("a", "b"), Relation("b", "c"), Relation("c", "a"), Relation("c", "d")]
        )
        assert _distances(await graph_store.related(["a"], depth=3)) == {"b": 1, "c": 1, "d": 2}

    async def test_related_sorted_by_distance_and_limited(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "hub", "n1", "n2", "n3", "far1", "far2")
        await graph_store.create_relations(
            [Relation("hub", n) for n in ("n1", "n2", "n3")] + [Relation("n1", "far1"), Relation("far1", "far2")]
        )
        everything = await graph_store.related(["hub"], depth=3)
        distances = [r.distance for r in everything]
        assert distances == sorted(distances)
        assert _distances(everything) == {"n1": 1, "n2": 1, "n3": 1, "far1": 2, "far2": 3}
        limited = await graph_store.related(["hub"], depth=3, limit=4)
        assert len(limited) == 4
        assert {r.id for r in limited} == {"n1", "n2", "n3", "far1"}
        assert len(await graph_store.related(["hub"], depth=3, limit=1)) == 1

    async def test_related_relation_types(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "a", "b", "c", "d")
        await graph_store.create_relations(
            [Relation("a", "b", "KNOWS"), Relation("b", "c", "CITES"), Relation("a", "d", "CITES")]
        )
        assert _distances(await graph_store.related(["a"], depth=2, relation_types=["KNOWS"])) == {"b": 1}
        assert _distances(await graph_store.related(["a"], depth=2, relation_types=["CITES"])) == {"d": 1}
        assert _distances(await graph_store.related(["a"], depth=2, relation_types=["KNOWS", "CITES"])) == {
            "b": 1,
            "c": 2,
            "d": 1,
        }
        assert await graph_store.related(["a"], depth=2, relation_types=["UNUSED"]) == []

    async def test_related_filter_on_every_hop(self, graph_store: GraphStore) -> None:
        # A(t1) - B(t2) - C(t1): tenant t1 must not reach C through B.
        await _docs(graph_store, ("A", {"tenant": "t1"}), ("B", {"tenant": "t2"}), ("C", {"tenant": "t1"}))
        await graph_store.create_relations([Relation("A", "B"), Relation("B", "C")])
        assert await graph_store.related(["A"], depth=3, filter={"tenant": "t1"}) == []  # type: ignore[arg-type]
        assert _distances(await graph_store.related(["A"], depth=2, filter={"tenant": "t2"})) == {"B": 1}  # type: ignore[arg-type]
        assert _distances(await graph_store.related(["A"], depth=2)) == {"B": 1, "C": 2}

    async def test_related_filter_uses_allowed_detour(self, graph_store: GraphStore) -> None:
        # A - X(t2) - C and A - Y - Z - C: with tenant t1, C is reached at distance 3, not 2.
        await _docs(
            graph_store,
            ("A", {"tenant": "t1"}),
            ("X", {"tenant": "t2"}),
            ("Y", {"tenant": "t1"}),
            ("Z", {"tenant": "t1"}),
            ("C", {"tenant": "t1"}),
        )
        await graph_store.create_relations(
            [Relation("A", "X"), Relation("X", "C"), Relation("A", "Y"), Relation("Y", "Z"), Relation("Z", "C")]
        )
        assert _distances(await graph_store.related(["A"], depth=3, filter={"tenant": "t1"})) == {  # type: ignore[arg-type]
            "Y": 1,
            "Z": 2,
            "C": 3,
        }
        assert _distances(await graph_store.related(["A"], depth=2, filter={"tenant": "t1"})) == {"Y": 1, "Z": 2}  # type: ignore[arg-type]

    async def test_related_invalid_depth(self, graph_store: GraphStore) -> None:
        await _chain(graph_store, "a", "b")
        for depth in (0, 4, -1):
            with pytest.raises(InvalidInput):
                await graph_store.related(["a"], depth=depth)

    async def test_related_without_seeds_or_relations(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "lonely")
        assert await graph_store.related([], depth=2) == []
        assert await graph_store.related(["lonely"], depth=3) == []
        assert await graph_store.related(["missing"], depth=1) == []

    async def test_related_sees_new_and_deleted_relations(self, graph_store: GraphStore) -> None:
        await _chain(graph_store, "a", "b")
        assert _distances(await graph_store.related(["a"], depth=2)) == {"b": 1}
        await _docs(graph_store, "c")
        await graph_store.create_relations([Relation("b", "c")])
        assert _distances(await graph_store.related(["a"], depth=2)) == {"b": 1, "c": 2}
        await graph_store.delete_relations([Relation("a", "b")])
        assert await graph_store.related(["a"], depth=2) == []

    # -- pagerank ----------------------------------------------------------------------------

    async def test_pagerank_star(self, graph_store: GraphStore) -> None:
        leaves = [f"leaf{i}" for i in range(5)]
        await _docs(graph_store, "hub", *leaves)
        await graph_store.create_relations([Relation(leaf, "hub") for leaf in leaves])
        scores = await graph_store.pagerank()
        assert set(scores) >= {"hub", *leaves}
        assert all(0.0 <= v <= 1.0 for v in scores.values())
        assert max(scores.values()) == pytest.approx(1.0)
        assert scores["hub"] == pytest.approx(1.0)
        assert all(scores["hub"] > scores[leaf] for leaf in leaves)
        assert scores["leaf0"] == pytest.approx(scores["leaf4"], rel=1e-3)

    async def test_pagerank_requested_ids(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "hub", "l1", "l2", "l3")
        await graph_store.create_relations([Relation(leaf, "hub") for leaf in ("l1", "l2", "l3")])
        scores = await graph_store.pagerank(["l1", "hub", "missing"])
        assert set(scores) == {"l1", "hub"}
        assert all(0.0 <= v <= 1.0 for v in scores.values())
        assert scores["hub"] > scores["l1"]
        assert await graph_store.pagerank([]) == {}

    async def test_pagerank_empty_store(self, graph_store: GraphStore) -> None:
        assert await graph_store.pagerank() == {}

    async def test_pagerank_follows_changes(self, graph_store: GraphStore) -> None:
        await _docs(graph_store, "hub", "l1", "l2")
        await graph_store.create_relations([Relation("l1", "hub"), Relation("l2", "hub")])
        before = await graph_store.pagerank()
        assert max(before, key=lambda k: before[k]) == "hub"
        fans = [f"fan{i}" for i in range(6)]
        await _docs(graph_store, *fans)
        # Both directions, so "l1" becomes central whether PageRank follows edge direction or not.
        await graph_store.create_relations([Relation(f, "l1") for f in fans] + [Relation("l1", f) for f in fans])
        after = await graph_store.pagerank()
        assert max(after, key=lambda k: after[k]) == "l1"
        assert after["l1"] == pytest.approx(1.0)
        await graph_store.delete_documents(["l1"])
        assert "l1" not in await graph_store.pagerank()
