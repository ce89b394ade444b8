"""The built-in components through the registry, and declarative pipelines."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from _stage_fakes import FakeEmbedder, FakeGraphStore, FakeVectorStore, WordOverlapReranker

from graphfuse import EmptyPipeline, InvalidInput, NotFound, Pipeline
from graphfuse.plugins import KINDS, Components, build_pipeline, get_registry, load_pipeline_spec
from graphfuse.scoring import ReciprocalRankFusion, WeightedScorer
from graphfuse.stages import (
    AccessPopularity,
    GraphExpansion,
    Hydrate,
    PageRank,
    ParentAggregation,
    Rerank,
    SemanticSearch,
    TemporalDecay,
)

BUILTIN_NAMES = {
    "stage": [
        "access",
        "aggregate",
        "bm25",
        "bridge",
        "entity_seeds",
        "graph",
        "hydrate",
        "pagerank",
        "ppr",
        "rerank",
        "semantic",
        "temporal",
        "time",
    ],
    "scorer": ["rrf", "weighted"],
    "graph_store": ["memory", "sqlite"],
    "vector_store": ["local", "memory"],
    "embedder": ["hashing", "local"],
    "reranker": ["cross-encoder", "embedding"],
    "cache_store": ["memory"],
    "token_counter": ["cl100k_base", "o200k_base", "regex"],
    "generator": [],  # generators call a model: plugins provide them (graphfuse-openai: openai)
    "entity_extractor": ["llm", "text"],  # graphfuse-spacy adds spacy
}


@pytest.fixture
def components() -> Components:
    return Components(
        graph_store=FakeGraphStore(),
        vector_store=FakeVectorStore(8),
        embedder=FakeEmbedder(8),
        reranker=WordOverlapReranker(),
    )


@pytest.mark.parametrize("kind", KINDS)
def test_builtin_names(kind: str) -> None:
    assert set(BUILTIN_NAMES[kind]) <= set(get_registry().names(kind))  # type: ignore[arg-type]


def test_builtins_plugin_registers_exactly_these() -> None:
    from graphfuse import _builtins

    for kind in KINDS:
        hook = getattr(_builtins, f"register_{kind}s", None)
        registered: dict[str, object] = {}
        if hook is None:
            assert BUILTIN_NAMES[kind] == [], kind
            continue
        hook(registered.__setitem__)
        assert sorted(registered) == BUILTIN_NAMES[kind], kind


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("semantic", SemanticSearch),
        ("hydrate", Hydrate),
        ("graph", GraphExpansion),
        ("temporal", TemporalDecay),
        ("pagerank", PageRank),
        ("access", AccessPopularity),
        ("rerank", Rerank),
        ("aggregate", ParentAggregation),
    ],
)
def test_builtin_stages(name: str, cls: type, components: Components) -> None:
    stage = get_registry().build_stage(name, components)
    assert isinstance(stage, cls)
    assert stage.name == name


@pytest.mark.parametrize(
    ("name", "missing"),
    [("semantic", "vector_store"), ("hydrate", "graph_store"), ("graph", "graph_store"), ("rerank", "reranker")],
)
def test_missing_component_is_named(name: str, missing: str) -> None:
    with pytest.raises(InvalidInput, match=rf"stage '{name}' needs a {missing}, but none was given"):
        get_registry().build_stage(name, Components())


def test_stage_options_are_validated_and_named(components: Components) -> None:
    registry = get_registry()
    assert registry.build_stage("graph", components, depth=1).name == "graph"
    with pytest.raises(InvalidInput, match=r"stage 'graph': .*depth"):
        registry.build_stage("graph", components, depth=9)
    with pytest.raises(InvalidInput, match=r"stage 'hydrate': .*unexpected keyword argument 'depth'"):
        registry.build_stage("hydrate", components, depth=1)
    with pytest.raises(InvalidInput, match=r"components must be graphfuse\.plugins\.Components"):
        registry.build_stage("access", {"graph_store": None})  # type: ignore[arg-type]


def test_temporal_half_life_in_days() -> None:
    registry = get_registry()
    stage = registry.build_stage("temporal", half_life_days=7)
    assert "days=7" in repr(stage)
    with pytest.raises(InvalidInput, match="half_life or half_life_days, not both"):
        registry.build_stage("temporal", half_life_days=7, half_life=timedelta(days=1))
    with pytest.raises(InvalidInput, match="half_life_days must be a number"):
        registry.build_stage("temporal", half_life_days="7")


def test_builtin_scorers() -> None:
    registry = get_registry()
    weighted = registry.create("scorer", "weighted", weights={"semantic": 1.0})
    assert isinstance(weighted, WeightedScorer)
    assert dict(weighted.weights) == {"semantic": 1.0}
    rrf = registry.create("scorer", "rrf", k=10)
    assert isinstance(rrf, ReciprocalRankFusion)
    assert rrf.k == 10


def test_kind_and_name_errors() -> None:
    registry = get_registry()
    with pytest.raises(InvalidInput, match="unknown component kind 'widget'; kinds are: stage, scorer"):
        registry.names("widget")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="stages are built with build_stage"):
        registry.create("stage", "semantic")
    with pytest.raises(NotFound, match=r"no graph store named 'neo5j'; known: (.*, )?memory, (.*, )?sqlite"):
        registry.create("graph_store", "neo5j")
    with pytest.raises(InvalidInput, match="non-empty string"):
        registry.create("scorer", "")


def test_components_require() -> None:
    store = FakeGraphStore()
    assert Components(graph_store=store).require("graph_store", by="me") is store
    with pytest.raises(InvalidInput, match="me needs a embedder"):
        Components().require("embedder", by="me")


async def test_declarative_pipeline_runs(components: Components) -> None:
    from graphfuse import Document, VectorRecord

    assert isinstance(components.graph_store, FakeGraphStore)
    docs = [Document("a", "apple pie"), Document("b", "banana bread")]
    await components.graph_store.store_documents(docs)
    assert components.embedder is not None
    assert components.vector_store is not None
    vectors = await components.embedder.embed_documents([d.content or "" for d in docs])
    await components.vector_store.upsert([VectorRecord(d.id, v) for d, v in zip(docs, vectors, strict=True)])

    pipeline = build_pipeline(
        {
            "stages": [{"name": "semantic", "limit": 5}, "hydrate"],
            "scorer": {"name": "weighted", "weights": {"semantic": 1}},
        },
        components,
    )
    assert isinstance(pipeline, Pipeline)
    results = await pipeline.aretrieve("apple pie", top_k=2)
    assert results[0].id == "a"
    assert results[0].document.content == "apple pie"


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ([], InvalidInput, "must be a mapping"),
        ({}, InvalidInput, "needs 'stages'"),
        ({"stages": "semantic"}, InvalidInput, "needs 'stages'"),
        ({"stages": ["hydrate"], "extra": 1}, InvalidInput, r"unknown pipeline spec key\(s\) \['extra'\]"),
        ({"stages": [{"limit": 3}]}, InvalidInput, r"stages\[0\] needs a 'name'"),
        ({"stages": [3]}, InvalidInput, r"stages\[0\] must be a name or a table"),
        ({"stages": ["hydrate", {"name": "graph", "depth": 0}]}, InvalidInput, r"stages\[1\]: stage 'graph'"),
        ({"stages": ["hydrate"], "scorer": {"name": "rrf", "k": 0}}, InvalidInput, "scorer: scorer 'rrf'"),
        ({"stages": ["nope"]}, NotFound, "no stage named 'nope'"),
        ({"stages": ["hydrate", "graph", "nope"]}, NotFound, r"^stages\[2\]: no stage named 'nope'"),
        ({"stages": ["hydrate"], "scorer": "nope"}, NotFound, r"^scorer: no scorer named 'nope'"),
    ],
)
def test_bad_specs(components: Components, spec: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        build_pipeline(spec, components)  # type: ignore[arg-type]


def test_empty_stage_list_is_an_empty_pipeline(components: Components) -> None:
    with pytest.raises((EmptyPipeline, InvalidInput)):
        build_pipeline({"stages": []}, components)


def test_toml_spec(tmp_path: Path, components: Components) -> None:
    path = tmp_path / "pipeline.toml"
    path.write_text(
        """
[[stages]]
name = "semantic"
limit = 20

[[stages]]
name = "hydrate"

[[stages]]
name = "temporal"
half_life_days = 30

[scorer]
name = "rrf"
k = 30
weights = { semantic = 2.0, temporal = 1.0 }
""",
        encoding="utf-8",
    )
    spec = load_pipeline_spec(path)
    pipeline = build_pipeline(spec, components)
    assert [s.name for s in pipeline.stages] == ["semantic", "hydrate", "temporal"]
    assert isinstance(pipeline.scorer, ReciprocalRankFusion)
    assert pipeline.scorer.k == 30


def test_toml_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="does not exist"):
        load_pipeline_spec(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[[stages]\nname=", encoding="utf-8")
    with pytest.raises(InvalidInput, match="is not valid TOML"):
        load_pipeline_spec(bad)


def test_plugins_page_lists_every_builtin_name() -> None:
    # docs/plugins.md's table of built-in names must list every name the registry holds.
    import re

    page = (Path(__file__).resolve().parents[2] / "docs" / "plugins.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (\w+) \| (.+) \|$", page.split("## Built-in names", 1)[1], re.MULTILINE))
    builtins = next(p for p in get_registry().plugins() if p.name == "builtins")
    for kind, names in builtins.registers.items():
        listed = set(re.findall(r"`([\w.\-]+)`", rows[kind]))
        assert set(names) <= listed, (kind, sorted(set(names) - listed))
