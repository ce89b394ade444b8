"""A filter only removes documents from the PPR walk.

The walk with a filter must be the directed, weighted walk of the whole graph minus the
documents outside the filter: a filter matching everything gives the unfiltered ranking,
and any filter gives what an unfiltered walk gives on a store holding only the kept documents.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from graphfuse import Candidate, Document, Query, Relation
from graphfuse.hosts import StageRunContext
from graphfuse.multihop import PersonalizedPageRank
from graphfuse.stores import InMemoryGraphStore, SQLiteGraphStore

Store = InMemoryGraphStore | SQLiteGraphStore


def _graph(n: int = 40, seed: int = 5) -> tuple[list[Document], list[Relation]]:
    rng = random.Random(seed)
    docs = [Document(f"n{i}", f"node {i}", {"group": i % 3, "tags": ["a", "b"][: 1 + i % 2]}) for i in range(n)]
    rels: dict[tuple[str, str, str], Relation] = {}
    for _ in range(n * 3):
        s, t = rng.sample(range(n), 2)
        kind = rng.choice(["MENTIONS", "LINKS_TO"])
        rels[(f"n{s}", f"n{t}", kind)] = Relation(f"n{s}", f"n{t}", kind, weight=round(rng.uniform(0.1, 1.0), 3))
    return docs, list(rels.values())


async def _store(kind: str, tmp_path: Path, docs: list[Document], rels: list[Relation], name: str) -> Store:
    store: Store = InMemoryGraphStore() if kind == "memory" else SQLiteGraphStore(tmp_path / f"{name}.sqlite")
    await store.store_documents(docs)
    await store.create_relations(rels)
    return store


async def _ranking(store: Store, seeds: list[str], flt: dict[str, object] | None) -> list[tuple[str, float]]:
    stage = PersonalizedPageRank(store, limit=50)
    candidates = [Candidate(Document(s), {"semantic": 1.0 - 0.1 * k}) for k, s in enumerate(seeds)]
    out = await stage.run(Query("q", filter=flt), candidates, StageRunContext())  # type: ignore[arg-type]
    return [(c.id, round(c.signals["ppr"], 12)) for c in out]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_filter_matching_everything_keeps_the_ranking(kind: str, tmp_path: Path) -> None:
    docs, rels = _graph()
    store = await _store(kind, tmp_path, docs, rels, "all")
    for seeds in (["n0"], ["n3", "n7"], ["n11", "n2", "n30"]):
        plain = await _ranking(store, seeds, None)
        assert len(plain) > 10
        assert await _ranking(store, seeds, {"group": {"$exists": True}}) == plain
        assert await _ranking(store, seeds, {"group": {"$lt": 99}}) == plain


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_filter_only_removes_documents(kind: str, tmp_path: Path) -> None:
    docs, rels = _graph()
    store = await _store(kind, tmp_path, docs, rels, "all")
    kept = {d.id for d in docs if d.metadata["group"] != 1}
    only_kept = await _store(
        kind,
        tmp_path,
        [d for d in docs if d.id in kept],
        [r for r in rels if r.source in kept and r.target in kept],
        "kept",
    )
    for seeds in (["n0"], ["n3", "n6"]):
        filtered = await _ranking(store, seeds, {"group": {"$ne": 1}})
        assert filtered == await _ranking(only_kept, seeds, None)
        assert {i for i, _ in filtered} <= kept
