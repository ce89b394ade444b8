"""SemanticSearch: ids only, the semantic signal, limit/min_score/filter, per-call options, bad embedders."""

from __future__ import annotations

import pytest
from _stage_fakes import FakeVectorStore, FixedEmbedder
from conftest import DIMENSION, World

from graphfuse import Candidate, Document, InvalidInput, Pipeline, Query, StageFailed
from graphfuse.hosts import StageRunContext
from graphfuse.stages import SemanticSearch


async def run(stage: SemanticSearch, query: Query, candidates: list[Candidate] | None = None) -> list[Candidate]:
    return list(await stage.run(query, candidates or [], StageRunContext()))


async def test_ids_only_with_semantic_signal(world: World) -> None:
    out = await run(SemanticSearch(world.vectors, world.embedder), Query("apple harvest"))
    assert out[0].id == "a"
    assert all(c.document.content is None for c in out)
    assert all(set(c.signals) == {"semantic"} for c in out)
    assert all(0.0 <= c.signals["semantic"] <= 1.0 for c in out)
    scores = [c.signals["semantic"] for c in out]
    assert scores == sorted(scores, reverse=True)


async def test_signal_is_the_cosine_clamped_at_zero() -> None:
    store = FakeVectorStore(2)
    from graphfuse import VectorRecord

    await store.upsert(
        [VectorRecord("same", [1.0, 0.0]), VectorRecord("half", [1.0, 1.0]), VectorRecord("opp", [-1.0, 0])]
    )
    out = await run(SemanticSearch(store, FixedEmbedder([2.0, 0.0], 2)), Query("q"))
    signals = {c.id: c.signals["semantic"] for c in out}
    assert signals["same"] == pytest.approx(1.0)
    assert signals["half"] == pytest.approx(2**-0.5)
    assert signals["opp"] == 0.0


async def test_limit_and_per_call_limit(world: World) -> None:
    stage = SemanticSearch(world.vectors, world.embedder, limit=3)
    assert len(await run(stage, Query("apple"))) == 3
    assert len(await run(stage, Query("apple", options={"semantic": {"limit": 1}}))) == 1


async def test_min_score_and_per_call_min_score(world: World) -> None:
    everything = await run(SemanticSearch(world.vectors, world.embedder), Query("apple harvest"))
    cut = everything[0].signals["semantic"] - 1e-9
    strict = await run(SemanticSearch(world.vectors, world.embedder, min_score=cut), Query("apple harvest"))
    assert [c.id for c in strict] == ["a"]
    per_call = await run(
        SemanticSearch(world.vectors, world.embedder), Query("apple harvest", options={"semantic": {"min_score": cut}})
    )
    assert [c.id for c in per_call] == ["a"]


async def test_query_filter_and_stage_filter_are_anded(world: World) -> None:
    unfiltered = {c.id for c in await run(SemanticSearch(world.vectors, world.embedder), Query("apple"))}
    assert "x" in unfiltered
    acme = await run(SemanticSearch(world.vectors, world.embedder), Query.of("apple", filter={"tenant": "acme"}))
    assert "x" not in {c.id for c in acme}
    both = await run(
        SemanticSearch(world.vectors, world.embedder, filter={"tenant": "globex"}),
        Query.of("apple", filter={"tenant": "acme"}),
    )
    assert both == []


async def test_existing_candidates_keep_their_place() -> None:
    store = FakeVectorStore(2)
    from graphfuse import VectorRecord

    await store.upsert([VectorRecord("hit", [1.0, 0.0])])
    before = [Candidate(Document("old", "text"), {"graph": 0.5}), Candidate(Document("hit"), {"graph": 1.0})]
    out = await run(SemanticSearch(store, FixedEmbedder([1.0, 0.0], 2)), Query("q"), before)
    assert [c.id for c in out] == ["old", "hit"]
    assert dict(out[1].signals) == {"graph": 1.0, "semantic": pytest.approx(1.0)}
    assert dict(before[1].signals) == {"graph": 1.0}  # inputs are never mutated


@pytest.mark.parametrize(
    ("vector", "dimension", "message"),
    [
        ([1.0, 0.0, 0.0], 2, "dimension 3, expected 2"),
        ([float("nan"), 0.0], 2, "nan"),
        ("not a vector", 2, "not a vector"),
    ],
)
async def test_bad_embedder_output_is_invalid_input(vector: object, dimension: int, message: str) -> None:
    stage = SemanticSearch(FakeVectorStore(2), FixedEmbedder(vector, dimension))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=message):
        await run(stage, Query("q"))


async def test_embedder_dimension_must_match_the_vector_store() -> None:
    stage = SemanticSearch(FakeVectorStore(DIMENSION), FixedEmbedder([1.0, 0.0], 2))
    with pytest.raises(InvalidInput, match="holds dimension 64"):
        await run(stage, Query("q"))


async def test_wrong_dimension_in_a_pipeline_is_stage_failed() -> None:
    pipeline = Pipeline([SemanticSearch(FakeVectorStore(2), FixedEmbedder([1.0], 2))])
    with pytest.raises(StageFailed, match="semantic") as info:
        await pipeline.aretrieve("q")
    assert info.value.stage == "semantic"
    assert isinstance(info.value.__cause__, InvalidInput)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": True}, "limit"),
        ({"limit": 2.5}, "limit"),
        ({"min_score": 1.5}, "min_score"),
        ({"min_score": float("nan")}, "min_score"),
        ({"filter": {"tenant": {"$bogus": 1}}}, "tenant"),
        ({"name": ""}, "name"),
        ({"signal": "has space"}, "signal"),
    ],
)
def test_constructor_validation_names_the_argument(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(InvalidInput, match=name):
        SemanticSearch(FakeVectorStore(2), FixedEmbedder([1.0, 0.0], 2), **kwargs)  # type: ignore[arg-type]


def test_components_must_implement_the_protocols() -> None:
    with pytest.raises(InvalidInput, match="vector_store"):
        SemanticSearch(object(), FixedEmbedder([1.0], 1))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="embedder"):
        SemanticSearch(FakeVectorStore(1), object())  # type: ignore[arg-type]


@pytest.mark.parametrize("options", [{"limit": 0}, {"min_score": "high"}, {"k": 3}])
async def test_bad_per_call_options_fail_before_any_io(options: dict[str, object]) -> None:
    store = FakeVectorStore(2)
    pipeline = Pipeline([SemanticSearch(store, FixedEmbedder([1.0, 0.0], 2))])
    with pytest.raises(InvalidInput, match="semantic"):
        await pipeline.aretrieve("q", options={"semantic": options})
    assert store.searches == []
