"""Presets: stage lists, weights, stage options, build-by-name, registration."""

from __future__ import annotations

from datetime import timedelta

import pytest
from _stage_fakes import WordOverlapReranker
from conftest import World

from graphfuse import AlreadyExists, InvalidInput, Pipeline, presets
from graphfuse.scoring import DEFAULT_WEIGHTS, WeightedScorer
from graphfuse.stages import GraphExpansion, SemanticSearch


def names_of(pipeline: Pipeline) -> list[str]:
    return [s.name for s in pipeline.stages]


def test_standard_has_all_seven_stages_and_default_weights(world: World) -> None:
    p = presets.standard(world.graph, world.vectors, world.embedder, WordOverlapReranker())
    assert names_of(p) == ["semantic", "hydrate", "graph", "temporal", "pagerank", "access", "rerank"]
    assert isinstance(p.scorer, WeightedScorer)
    assert dict(p.scorer.weights) == dict(DEFAULT_WEIGHTS)


def test_no_rerank_and_minimal(world: World) -> None:
    assert names_of(presets.no_rerank(world.graph, world.vectors, world.embedder)) == [
        "semantic",
        "hydrate",
        "graph",
        "temporal",
        "pagerank",
        "access",
    ]
    assert names_of(presets.minimal(world.vectors, world.embedder)) == ["semantic"]
    assert names_of(presets.minimal(world.vectors, world.embedder, world.graph)) == ["semantic", "hydrate"]


def test_weights_and_stage_options(world: World) -> None:
    p = presets.standard(
        world.graph,
        world.vectors,
        world.embedder,
        WordOverlapReranker(),
        weights={"semantic": 1.0},
        graph={"depth": 1},
        temporal={"half_life": timedelta(days=7)},
    )
    assert dict(p.scorer.weights) == {"semantic": 1.0}  # type: ignore[attr-defined]
    graph = p.stages[2]
    assert isinstance(graph, GraphExpansion)
    assert "depth=1" in repr(graph)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"semantic": -1.0}, "must not be negative"),
        ({"semantic": float("nan")}, "finite"),
        ({"semantic": 0.0, "graph": 0.0}, "greater than zero"),
        ({}, "non-empty"),
    ],
)
def test_bad_weights(world: World, weights: dict[str, float], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        presets.no_rerank(world.graph, world.vectors, world.embedder, weights=weights)


def test_bad_stage_options(world: World) -> None:
    with pytest.raises(InvalidInput, match="depth"):
        presets.no_rerank(world.graph, world.vectors, world.embedder, graph={"depth": 5})
    with pytest.raises(InvalidInput, match="rerank"):
        presets.no_rerank(world.graph, world.vectors, world.embedder, rerank={"top_k": 5})
    with pytest.raises(InvalidInput, match="mapping"):
        presets.no_rerank(world.graph, world.vectors, world.embedder, graph=2)  # type: ignore[arg-type]


def test_build_by_name(world: World) -> None:
    p = presets.build("no_rerank", graph_store=world.graph, vector_store=world.vectors, embedder=world.embedder)
    assert len(p.stages) == 6
    assert names_of(presets.build("minimal", vector_store=world.vectors, embedder=world.embedder)) == ["semantic"]


def test_build_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(
        InvalidInput, match=r"unknown preset 'fancy'; known presets: .*minimal, .*no_rerank, .*standard"
    ):
        presets.build("fancy")


def test_build_missing_component_or_unexpected_option(world: World) -> None:
    with pytest.raises(InvalidInput, match="embedder"):
        presets.build("minimal", vector_store=world.vectors)
    with pytest.raises(InvalidInput, match="depth"):
        presets.build("minimal", vector_store=world.vectors, embedder=world.embedder, depth=2)


async def test_build_passes_only_the_components_a_preset_uses(world: World) -> None:
    # A host may pass a reranker to every preset: one that does not use it never sees it.
    for p in (
        presets.build("minimal", vector_store=world.vectors, embedder=world.embedder, reranker=object()),
        await presets.abuild("minimal", vector_store=world.vectors, embedder=world.embedder, reranker=object()),
    ):
        assert names_of(p) == ["semantic"]


def test_register_a_preset(world: World) -> None:
    def multihop(vector_store: object, embedder: object, graph_store: object) -> Pipeline:
        return Pipeline(
            [SemanticSearch(vector_store, embedder), GraphExpansion(graph_store, depth=3)]  # type: ignore[arg-type]
        )

    presets.register("test_multihop", multihop)
    try:
        assert "test_multihop" in presets.names()
        p = presets.build("test_multihop", vector_store=world.vectors, embedder=world.embedder, graph_store=world.graph)
        assert names_of(p) == ["semantic", "graph"]
        with pytest.raises(AlreadyExists, match="test_multihop"):
            presets.register("test_multihop", multihop)
        presets.register("test_multihop", multihop, replace=True)
    finally:
        presets.unregister("test_multihop")


async def test_the_title_linker_goes_only_to_a_factory_that_takes_it(world: World) -> None:
    given: dict[str, dict[str, object]] = {}

    def words_only(*, bm25: object) -> Pipeline:
        given["words_only"] = {"bm25": bm25}
        return Pipeline([SemanticSearch(world.vectors, world.embedder)])

    def with_titles(*, bm25: object, linker: object) -> Pipeline:
        given["with_titles"] = {"bm25": bm25, "linker": linker}
        return Pipeline([SemanticSearch(world.vectors, world.embedder)])

    bm25, linker = object(), object()
    for name, factory in (("test_words_only", words_only), ("test_with_titles", with_titles)):
        presets.register(name, factory, needs=("corpus_indexes",))
    try:
        await presets.abuild("test_words_only", bm25=bm25, linker=linker)
        await presets.abuild("test_with_titles", bm25=bm25, linker=linker)
    finally:
        presets.unregister("test_words_only")
        presets.unregister("test_with_titles")
    assert given == {"words_only": {"bm25": bm25}, "with_titles": {"bm25": bm25, "linker": linker}}


def test_register_validation() -> None:
    with pytest.raises(InvalidInput, match="identifier"):
        presets.register("not a name", lambda: None)  # type: ignore[arg-type, return-value]
    with pytest.raises(InvalidInput, match="callable"):
        presets.register("nope", 3)  # type: ignore[arg-type]
    presets.register("test_not_a_pipeline", lambda: 3)  # type: ignore[arg-type, return-value]
    try:
        with pytest.raises(InvalidInput, match="not a Pipeline"):
            presets.build("test_not_a_pipeline")
    finally:
        presets.unregister("test_not_a_pipeline")


async def test_standard_end_to_end(world: World) -> None:
    p = presets.standard(world.graph, world.vectors, world.embedder, WordOverlapReranker())
    results = await p.aretrieve("apple harvest", top_k=3, filter={"tenant": "acme"})
    assert results[0].id == "a"
    assert all(r.document.metadata["tenant"] == "acme" for r in results)
    assert set(results[0].signals) == {"semantic", "graph", "temporal", "pagerank", "access", "rerank"}
    assert results[0].score == pytest.approx(sum(results[0].contributions.values()))


async def test_rerank_picks_its_top_k_by_the_preset_weights(world: World) -> None:
    reranker = WordOverlapReranker()
    p = presets.standard(
        world.graph,
        world.vectors,
        world.embedder,
        reranker,
        weights={"access": 1.0},
        semantic={"min_score": 0.0},
        rerank={"top_k": 1},
    )
    await p.aretrieve("apple harvest", top_k=1)
    # b has the largest access_count (20): by access alone it is the one sent to the reranker.
    assert reranker.calls == [("apple harvest", ["banana plantation near the coast"])]


async def test_minimal_scores_by_the_cosine_itself(world: World) -> None:
    results = await presets.minimal(world.vectors, world.embedder, world.graph).aretrieve("apple harvest", top_k=3)
    assert results
    for r in results:
        assert r.score == pytest.approx(r.signals["semantic"])


async def test_hits_at_cosine_zero_get_no_graph_boost(world: World) -> None:
    # Hits carry their cosine into the graph signal: a hit at cosine 0 gives no boost, so in a
    # small store not every document gets the same one.
    pipeline = presets.no_rerank(world.graph, world.vectors, world.embedder, semantic={"min_score": 0.0})
    results = await pipeline.aretrieve("apple harvest", top_k=10, filter={"tenant": "acme"})
    by_id = {r.id: r for r in results}
    assert results[0].id == "a"
    assert by_id["a"].signals["graph"] == pytest.approx(by_id["a"].signals["semantic"])
    for r in results:
        if r.signals.get("semantic", 0.0) == 0.0:
            assert r.signals["graph"] < by_id["a"].signals["graph"]
    far = [r for r in results if r.id in {"c", "d"}]  # two and three hops from the only real hit
    assert far
    assert all(r.signals["graph"] <= by_id["a"].signals["graph"] * 0.25 + 1e-9 for r in far)
