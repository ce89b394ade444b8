"""Context assembly over a pipeline is the layer above retrieval: graphfuse.context.aretrieve_context.

The pipeline knows nothing of it; the pipeline's own graph store and embedder are found
through the stages' public ``graph_store`` / ``embedder`` attributes and the passage selection.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from graphfuse import Candidate, Document, InvalidInput, Pipeline, Query, RunContext
from graphfuse.context import (
    aretrieve_context,
    pipeline_embedder,
    pipeline_graph_store,
    retrieve_context,
)
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.stages import Hydrate, SemanticSearch
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

RECORDS = [
    SourceRecord("film", "The Quiet Harbour is a 1961 drama film directed by Anna Berg.", title="The Quiet Harbour"),
    SourceRecord("berg", "Anna Berg was a Norwegian film director. Her mother was Liv Dahl.", title="Anna Berg"),
]


class Seeds:
    """A stage of its own with a private store: nothing for the context layer to find."""

    name = "seeds"

    def __init__(self, store: InMemoryGraphStore) -> None:
        self._graph_store = store

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return [Candidate(Document("film"), {"semantic": 0.9}), Candidate(Document("berg"), {"semantic": 0.5})]


async def _stores() -> tuple[InMemoryGraphStore, LocalVectorStore, HashingEmbedder]:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=32)
    await Indexer(graph, vectors, embedder).aindex(RECORDS)
    return graph, vectors, embedder


async def test_the_pipeline_components_come_from_public_stage_attributes() -> None:
    graph, vectors, embedder = await _stores()
    pipeline = Pipeline([SemanticSearch(vectors, embedder), Hydrate(graph)])
    assert pipeline_graph_store(pipeline) is graph
    assert pipeline_embedder(pipeline) is embedder
    private = Pipeline([Seeds(graph)])
    assert pipeline_graph_store(private) is None
    assert pipeline_embedder(private) is None


async def test_pipeline_acontext_is_aretrieve_context() -> None:
    graph, vectors, embedder = await _stores()
    pipeline = Pipeline([SemanticSearch(vectors, embedder), Hydrate(graph)])
    via_layer = await aretrieve_context(pipeline, "Who directed The Quiet Harbour?", budget=200)
    via_pipeline = await aretrieve_context(pipeline, "Who directed The Quiet Harbour?", budget=200)
    assert via_layer == via_pipeline
    assert "Anna Berg" in via_layer.text


async def test_results_without_content_are_read_from_a_given_store() -> None:
    graph, _, _ = await _stores()
    pipeline = Pipeline([Seeds(graph)])
    without = await aretrieve_context(pipeline, "Who directed The Quiet Harbour?", budget=200)
    assert "Anna Berg" not in without.text  # no store found: the bare results carry no text
    assert "Anna Berg" not in (await aretrieve_context(pipeline, "Who directed The Quiet Harbour?", budget=200)).text
    given = await aretrieve_context(pipeline, "Who directed The Quiet Harbour?", budget=200, graph_store=graph)
    assert [s.id for s in given.sources][:1] == ["film"]
    assert "Anna Berg" in given.text


def test_the_sync_form_checks_before_retrieval() -> None:
    class Boom:
        name = "boom"

        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
            raise AssertionError("retrieval ran")

    with pytest.raises(InvalidInput, match="format"):
        retrieve_context(Pipeline([Boom()]), "q", budget=100, format="xml")
