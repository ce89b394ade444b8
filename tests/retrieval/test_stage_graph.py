"""GraphExpansion: decay ** distance, depth, cap, relation types, filters on every hop, one batch."""

from __future__ import annotations

import pytest
from _stage_fakes import FakeGraphStore
from conftest import CORPUS, RELATIONS, World, corpus_documents

from graphfuse import Candidate, Document, InvalidInput, Pipeline, Query, RelatedDocument
from graphfuse.hosts import StageRunContext
from graphfuse.stages import GraphExpansion, Hydrate


def seed(*ids: str) -> list[Candidate]:
    return [Candidate(Document(i, f"content {i}", {"tenant": "acme"}), {"semantic": 1.0}) for i in ids]


async def expand(stage: GraphExpansion, candidates: list[Candidate], query: Query | None = None) -> dict[str, float]:
    out = await stage.run(query or Query("q"), candidates, StageRunContext())
    return {c.id: c.signals["graph"] for c in out}


async def test_signal_is_decay_to_the_distance(world: World) -> None:
    assert await expand(GraphExpansion(world.graph), seed("a")) == {"a": 1.0, "b": 0.5, "x": 0.5, "c": 0.25, "y": 0.25}
    assert await expand(GraphExpansion(world.graph, depth=3), seed("a")) == {
        "a": 1.0,
        "b": 0.5,
        "x": 0.5,
        "c": 0.25,
        "y": 0.25,
        "d": 0.125,
    }
    got = await expand(GraphExpansion(world.graph, depth=1, decay=0.8), seed("c"))
    assert got == {"c": 1.0, "b": pytest.approx(0.8), "d": pytest.approx(0.8)}


async def test_new_documents_are_hydrated_and_appended_nearest_first(world: World) -> None:
    before = seed("a")
    out = list(await GraphExpansion(world.graph).run(Query("q"), before, StageRunContext()))
    assert [c.id for c in out] == ["a", "b", "x", "c", "y"]
    assert out[1].document.content == "banana plantation near the coast"
    assert dict(out[0].signals) == {"semantic": 1.0, "graph": 1.0}
    assert dict(out[1].signals) == {"graph": 0.5}
    assert dict(before[0].signals) == {"semantic": 1.0}


async def test_tenant_filter_does_not_leak_through_a_hop(world: World) -> None:
    got = await expand(GraphExpansion(world.graph, depth=3), seed("a"), Query.of("q", filter={"tenant": "acme"}))
    # x belongs to globex; y is acme but only reachable through x.
    assert got == {"a": 1.0, "b": 0.5, "c": 0.25, "d": 0.125}


async def test_relation_types_and_per_call_options(world: World) -> None:
    stage = GraphExpansion(world.graph, depth=3, relation_types=["CITES"])
    assert await expand(stage, seed("c")) == {"c": 1.0, "b": 0.5, "a": 0.25, "x": 0.125}
    per_call = Query("q", options={"graph": {"depth": 1, "relation_types": ["MENTIONS"]}})
    assert await expand(stage, seed("c"), per_call) == {"c": 1.0, "d": 0.5}


async def test_max_expansion_caps_new_documents(world: World) -> None:
    assert len(await expand(GraphExpansion(world.graph, max_expansion=1), seed("a"))) == 2
    capped = await expand(GraphExpansion(world.graph), seed("a"), Query("q", options={"graph": {"max_expansion": 2}}))
    assert len(capped) == 3


async def test_store_ignoring_the_cap_is_still_capped() -> None:
    class Flooding(FakeGraphStore):
        async def related(self, ids, **kwargs):  # type: ignore[no-untyped-def, override]
            return [RelatedDocument(i, 1, ids[0]) for i in CORPUS if i not in ids]

    store = Flooding()
    await store.store_documents(corpus_documents())
    assert len(await expand(GraphExpansion(store, max_expansion=2), seed("a"))) == 3


async def test_one_related_and_one_get_documents_call() -> None:
    store = FakeGraphStore()
    await store.store_documents(corpus_documents())
    await store.create_relations(RELATIONS)
    await expand(GraphExpansion(store), seed("a", "c"))
    assert [call[0] for call in store.calls] == ["related", "get_documents"]


async def test_no_candidates_no_call() -> None:
    store = FakeGraphStore()
    assert await expand(GraphExpansion(store), []) == {}
    assert store.calls == []


async def test_store_returning_a_bad_distance_is_invalid_input() -> None:
    class Broken(FakeGraphStore):
        async def related(self, ids, **kwargs):  # type: ignore[no-untyped-def, override]
            return [RelatedDocument("b", 7, "a")]

    with pytest.raises(InvalidInput, match="distance 7"):
        await expand(GraphExpansion(Broken()), seed("a"))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"depth": 0}, "depth"),
        ({"depth": 4}, "depth"),
        ({"depth": 2.0}, "depth"),
        ({"max_expansion": 0}, "max_expansion"),
        ({"relation_types": "CITES"}, "relation_types"),
        ({"relation_types": []}, "relation_types"),
        ({"decay": 0.0}, "decay"),
        ({"decay": 1.5}, "decay"),
    ],
)
def test_constructor_validation(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(InvalidInput, match=name):
        GraphExpansion(FakeGraphStore(), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("depth", [0, 4, -1, "2"])
async def test_per_call_depth_outside_1_to_3_is_invalid_input(world: World, depth: object) -> None:
    pipeline = Pipeline([Hydrate(world.graph), GraphExpansion(world.graph)])
    with pytest.raises(InvalidInput, match="'graph' option 'depth'"):
        await pipeline.aretrieve("q", options={"graph": {"depth": depth}})


async def test_two_graph_stages_under_different_names(world: World) -> None:
    first = GraphExpansion(world.graph, depth=1, relation_types=["CITES"], name="cites", signal="graph_cites")
    second = GraphExpansion(world.graph, depth=1, relation_types=["MENTIONS"], name="mentions")
    out = await second.run(
        Query("q"), list(await first.run(Query("q"), seed("c"), StageRunContext())), StageRunContext()
    )
    signals = {c.id: dict(c.signals) for c in out}
    assert signals["b"] == {"graph_cites": 0.5, "graph": 1.0}
    assert signals["d"] == {"graph": 0.5}


def weighted_seed(id_: str, semantic: float) -> Candidate:
    return Candidate(Document(id_, f"content {id_}", {"tenant": "acme"}), {"semantic": semantic})


async def test_seeds_carry_their_semantic_strength(world: World) -> None:
    # A seed's graph signal is its cosine, its neighbours' that strength times decay ** distance.
    got = await expand(GraphExpansion(world.graph, depth=1), [weighted_seed("a", 0.6)])
    assert got == {"a": pytest.approx(0.6), "b": pytest.approx(0.3), "x": pytest.approx(0.3)}


async def test_a_zero_cosine_hit_is_no_seed(world: World) -> None:
    # A semantic hit at cosine 0 is no seed: it must not get graph 1.0 and boost its neighbourhood.
    out = await GraphExpansion(world.graph).run(Query("q"), [weighted_seed("a", 0.0)], StageRunContext())
    assert [(c.id, c.signals["graph"]) for c in out] == [("a", 0.0)]


async def test_a_neighbour_takes_the_strongest_seed(world: World) -> None:
    # b is one hop from both a (strong) and c (weak): it is scored from a, whatever the order.
    for order in (["c", "a"], ["a", "c"]):
        strengths = {"a": 0.9, "c": 0.2}
        got = await expand(GraphExpansion(world.graph, depth=1), [weighted_seed(i, strengths[i]) for i in order])
        assert got["b"] == pytest.approx(0.45)


async def test_min_seed_score_keeps_weak_hits_from_seeding(world: World) -> None:
    stage = GraphExpansion(world.graph, depth=1, min_seed_score=0.5)
    assert await expand(stage, [weighted_seed("a", 0.4)]) == {"a": 0.0}
    assert await expand(stage, [weighted_seed("a", 0.5)]) == {"a": 0.5, "b": 0.25, "x": 0.25}
    per_call = Query("q", options={"graph": {"min_seed_score": 0.3}})
    assert await expand(stage, [weighted_seed("a", 0.4)], per_call) == {
        "a": pytest.approx(0.4),
        "b": pytest.approx(0.2),
        "x": pytest.approx(0.2),
    }
    with pytest.raises(InvalidInput, match="min_seed_score"):
        GraphExpansion(world.graph, min_seed_score=1.5)


async def test_candidates_without_the_seed_signal_are_full_seeds(world: World) -> None:
    bare = [Candidate(Document("a", "content a", {"tenant": "acme"}), {"bm25": 0.2})]
    assert (await expand(GraphExpansion(world.graph, depth=1), bare))["a"] == 1.0
    weak = [weighted_seed("a", 0.2)]
    assert (await expand(GraphExpansion(world.graph, depth=1, seed_signal=None), weak))["b"] == 0.5
