"""retrieve_context / aretrieve_context over indexed embedded stores, and the stores' ``relations``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphfuse import GraphStore, InvalidInput, Pipeline, Relation, presets
from graphfuse.context import FORMATS, Context, TokenBudget, aretrieve_context, retrieve_context
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker
from graphfuse.multihop import multihop
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore

RECORDS = [
    SourceRecord("film", "The Quiet Harbour is a 1961 drama film directed by Anna Berg.", title="The Quiet Harbour"),
    SourceRecord(
        "berg",
        "Anna Berg was a Norwegian film director. Her mother was the painter Liv Dahl.",
        title="Anna Berg",
        metadata={"tenant": "acme"},
    ),
    SourceRecord("dahl", "Liv Dahl was a Norwegian painter.", title="Liv Dahl", metadata={"tenant": "globex"}),
]


@dataclass
class Stores:
    graph: GraphStore
    vectors: LocalVectorStore
    embedder: HashingEmbedder
    linker: TitleLinker


@pytest.fixture(params=["memory", "sqlite"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    graph: GraphStore = InMemoryGraphStore() if request.param == "memory" else SQLiteGraphStore(tmp_path / "g.db")
    vectors = LocalVectorStore()
    embedder = HashingEmbedder(dimension=64)
    linker = TitleLinker()
    records = [
        r if r.metadata else SourceRecord(r.id, r.text, title=r.title, metadata={"tenant": "acme"}) for r in RECORDS
    ]
    await Indexer(graph, vectors, embedder, extractors=[linker]).aindex(records)
    yield Stores(graph, vectors, embedder, linker)
    await graph.close()
    await vectors.close()


QUESTION = "Who was the mother of the director of The Quiet Harbour?"


@pytest.mark.parametrize("fmt", FORMATS)
async def test_acontext_every_format(stores: Stores, fmt: str) -> None:
    pipeline = multihop(stores.graph, stores.vectors, stores.embedder, linker=stores.linker)
    ctx = await aretrieve_context(pipeline, QUESTION, budget=300, format=fmt)
    assert isinstance(ctx, Context)
    assert ctx.format == fmt
    assert ctx.counter == "cl100k_base"
    assert 0 < ctx.tokens <= 300
    assert {s.id for s in ctx.sources} >= {"film", "berg"}
    assert "Liv Dahl" in ctx.text


def test_context_sync_with_top_k(stores: Stores) -> None:
    pipeline = presets.minimal(stores.vectors, stores.embedder, stores.graph)
    ctx = retrieve_context(pipeline, QUESTION, budget=500, top_k=1)
    assert len(ctx.sources) == 1


async def test_filter_reaches_retrieval_and_graph_neighbours(stores: Stores) -> None:
    pipeline = multihop(stores.graph, stores.vectors, stores.embedder, linker=stores.linker)
    ctx = await aretrieve_context(pipeline, QUESTION, budget=400, format="graph", filter={"tenant": "acme"})
    assert "dahl" not in {s.id for s in ctx.sources}
    assert "Liv Dahl was a Norwegian painter" not in ctx.text
    # The sentence of an allowed document that names Liv Dahl is allowed text.
    unfiltered = await aretrieve_context(pipeline, QUESTION, budget=400, format="graph")
    assert "dahl" in {s.id for s in unfiltered.sources}


async def test_token_budget_and_without_hydrate(stores: Stores) -> None:
    # No hydrate stage: the pipeline's results carry ids only; a given graph store fills them in.
    bare = presets.minimal(stores.vectors, stores.embedder)
    ctx = await aretrieve_context(bare, QUESTION, budget=TokenBudget(2000), graph_store=stores.graph)
    assert ctx.sources
    assert ctx.allocation is not None
    assert ctx.tokens <= ctx.allocation.context
    without = await aretrieve_context(bare, QUESTION, budget=200)
    assert without.is_empty
    assert {d.reason for d in without.dropped} == {"no content"}
    with pytest.raises(InvalidInput, match="needs a graph store"):
        await aretrieve_context(bare, QUESTION, budget=200, format="graph")


async def test_bad_format_and_budget_fail_before_retrieval(stores: Stores) -> None:
    class Counting:
        name = "counting"
        calls = 0

        async def run(self, query: object, candidates: object, context: object) -> list[object]:
            Counting.calls += 1
            return []

    pipeline = Pipeline([Counting()])
    with pytest.raises(InvalidInput, match="unknown context format"):
        await aretrieve_context(pipeline, QUESTION, budget=100, format="summary")
    with pytest.raises(InvalidInput, match="budget must be a positive"):
        await aretrieve_context(pipeline, QUESTION, budget=0)
    assert Counting.calls == 0


async def test_store_relations_touching_ids(stores: Stores) -> None:
    relations = await stores.graph.relations(["berg"])  # type: ignore[attr-defined]
    assert all(isinstance(r, Relation) for r in relations)
    pairs = {(r.source, r.target, r.type) for r in relations}
    assert ("film", "berg", "MENTIONS") in pairs
    assert ("berg", "dahl", "MENTIONS") in pairs
    assert all("berg" in (r.source, r.target) for r in relations)
    assert relations == sorted(relations, key=lambda r: (r.source, r.target, r.type))
    assert await stores.graph.relations(["nope"]) == []  # type: ignore[attr-defined]
    assert len(await stores.graph.relations(["berg"], limit=1)) == 1  # type: ignore[attr-defined]
