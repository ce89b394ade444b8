"""Extension seams: the preset catalogue, the component-kind table, capability Protocols."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _plugin_dists import FakeSite, fake_site
from conftest import World

import graphfuse
from graphfuse import InvalidInput, PluginError, presets
from graphfuse.embedders import HashingEmbedder
from graphfuse.plugins import COMPONENT_KINDS, EMBEDDER, KINDS, RERANKER, get_registry, hookspecs
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore


@pytest.fixture
def site(tmp_path: Path) -> Iterator[FakeSite]:
    with fake_site(tmp_path) as s:
        yield s


PRESET_PLUGIN = """
from graphfuse.plugins import hookimpl

def recent(vector_store, embedder, graph_store=None):
    from graphfuse import Pipeline
    from graphfuse.stages import Hydrate, SemanticSearch, TemporalDecay
    stages = [SemanticSearch(vector_store, embedder)]
    if graph_store is not None:
        stages += [Hydrate(graph_store), TemporalDecay()]
    return Pipeline(stages)

@hookimpl
def register_presets(register):
    register("recent", recent, needs=("vector_store", "embedder"), uses=("graph_store",), description="recent first")
"""


def test_a_plugin_adds_a_preset_through_the_hook(site: FakeSite, world: World) -> None:
    site.module("gf_recent", PRESET_PLUGIN)
    site.dist("graphfuse-recent", {"recent": "gf_recent"})
    get_registry().reload()
    assert "recent" in presets.names()
    entry = presets.get("recent")
    assert (entry.plugin, entry.needs, entry.uses) == ("recent", {"vector_store", "embedder"}, {"graph_store"})
    info = next(p for p in get_registry().plugins() if p.name == "recent")
    assert info.registers["preset"] == ("recent",)
    assert "register_presets" in info.hooks
    # A host passes what it has; the preset receives what it declares (no reranker here).
    pipeline = graphfuse.run_sync(
        presets.abuild(
            "recent", graph_store=world.graph, vector_store=world.vectors, embedder=world.embedder, reranker=object()
        )
    )
    assert [s.name for s in pipeline.stages] == ["semantic", "hydrate", "temporal"]


def test_a_bad_preset_declaration_fails_only_that_plugin(site: FakeSite) -> None:
    site.module(
        "gf_badpreset",
        """
from graphfuse.plugins import hookimpl

@hookimpl
def register_presets(register):
    register("odd", "x:y", needs=("a_spaceship",))
""",
    )
    site.dist("graphfuse-badpreset", {"badpreset": "gf_badpreset"})
    get_registry().reload()
    info = next(p for p in get_registry().plugins() if p.name == "badpreset")
    assert info.error is not None
    assert "unknown needs ['a_spaceship']" in info.error
    assert "standard" in presets.names()


def test_builtin_presets_declare_what_they_need() -> None:
    assert {"standard", "no_rerank", "minimal", "multihop", "bm25", "hybrid"} <= set(presets.names())
    assert "reranker" in presets.get("standard").needs
    assert "reranker" not in presets.get("no_rerank").inputs
    assert "corpus_indexes" in presets.get("multihop").needs
    assert presets.get("standard").plugin == "builtins"
    with pytest.raises(InvalidInput, match="unknown preset 'nope'; known presets: bm25, hybrid"):
        presets.get("nope")


async def test_abuild_names_a_missing_input_and_builds_corpus_indexes(world: World) -> None:
    with pytest.raises(InvalidInput, match="preset 'standard' needs reranker"):
        await presets.abuild("standard", graph_store=world.graph, vector_store=world.vectors, embedder=world.embedder)
    # multihop: the corpus indexes come from the graph store, which can list its documents.
    pipeline = await presets.abuild(
        "multihop", graph_store=world.graph, vector_store=world.vectors, embedder=world.embedder
    )
    assert [s.name for s in pipeline.stages][:3] == ["semantic", "bm25", "entity"]
    results = await (await presets.abuild("bm25", graph_store=world.graph)).aretrieve("apple", top_k=3)
    assert results
    assert all(r.signals["bm25"] > 0 for r in results)


def test_register_validates_declarations() -> None:
    with pytest.raises(InvalidInput, match="unknown needs"):
        presets.register("x_preset", lambda: None, needs=("nothing",))
    with pytest.raises(InvalidInput, match="'module:attribute'"):
        presets.register("x_preset", "no-colon")
    with pytest.raises(InvalidInput, match="both needed and used"):
        presets.register("x_preset", lambda: None, needs=("embedder",), uses=("embedder",))
    with pytest.raises(graphfuse.NotFound, match="x_preset"):
        presets.unregister("x_preset")


def test_a_lazy_preset_target_that_does_not_import_is_a_plugin_error() -> None:
    presets.register("x_broken", "graphfuse_no_such_module:make")
    try:
        with pytest.raises(PluginError, match="cannot import 'graphfuse_no_such_module:make'"):
            presets.build("x_broken")
    finally:
        presets.unregister("x_broken")


def test_every_kind_of_the_table_has_its_hook_and_registry_name() -> None:
    assert tuple(k.name for k in COMPONENT_KINDS) == KINDS
    for kind in COMPONENT_KINDS:
        hook = getattr(hookspecs, kind.hook)
        assert getattr(hook, "graphfuse_spec", None) is not None, kind.hook
        assert kind.hook in hookspecs.__all__
        assert kind.protocol.__name__ in (hook.__doc__ or "")
    # ... and every hook written out in hookspecs is a kind's (or the presets hook).
    written = {n for n in vars(hookspecs) if n.startswith("register_")} - {"register_presets"}
    assert written == {k.hook for k in COMPONENT_KINDS}
    embedder = get_registry().create(EMBEDDER, "hashing", dimension=8)
    assert isinstance(embedder, HashingEmbedder)
    assert get_registry().names(RERANKER) == get_registry().names("reranker")
    with pytest.raises(InvalidInput, match="unknown component kind 'spaceship'"):
        get_registry().create("spaceship", "x")


def test_capabilities_are_runtime_checkable_protocols() -> None:
    graph, vectors = InMemoryGraphStore(), LocalVectorStore(None)
    assert isinstance(graph, graphfuse.DocumentListing)
    assert isinstance(graph, graphfuse.AdjacencySource)
    assert isinstance(graph, graphfuse.PageRankRefreshing)
    assert not isinstance(vectors, graphfuse.DocumentListing)
    from graphfuse.scoring import WeightedScorer
    from graphfuse.stages import TemporalDecay

    assert isinstance(WeightedScorer(), graphfuse.ExplainsScores)
    assert isinstance(TemporalDecay(), graphfuse.ChecksOptions)


def test_presets_and_multihop_do_not_import_each_other() -> None:
    code = "import sys, graphfuse.multihop; assert 'graphfuse.presets' not in sys.modules, 'multihop imports presets'\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
