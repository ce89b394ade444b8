"""GraphFuse inside a LlamaIndex query engine, offline on the embedded default.

A few documents with links and timestamps go into SQLite (graph) and a local vector store;
a GraphFuse pipeline (semantic search + hydrate) is the query engine's retriever, graph
expansion wraps it, and GraphFuse postprocessors add recency, PageRank and popularity before
fusing them into the final score. ``MockLLM`` stands in for the LLM only.

Run: ``python examples/llama_index_query_engine.py``
"""

from __future__ import annotations

import asyncio
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    PageRankPostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse import SIGNALS_KEY, GraphExpansionRetriever, GraphFuseRetriever

from graphfuse import Document, Pipeline, Relation, VectorRecord
from graphfuse.embedders import HashingEmbedder
from graphfuse.stages import Hydrate, SemanticSearch
from graphfuse.stores import LocalVectorStore, SQLiteGraphStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
DOCUMENTS = [
    Document(
        "turbine",
        "The river turbine feeds the town's power station.",
        {"access_count": 40},
        created_at=NOW - timedelta(days=3),
    ),
    Document(
        "station",
        "The power station supplies the hospital and the school.",
        {"access_count": 250},
        created_at=NOW - timedelta(days=60),
    ),
    Document(
        "hospital",
        "The hospital runs backup generators during storms.",
        {"access_count": 90},
        created_at=NOW - timedelta(days=400),
    ),
    Document(
        "storm",
        "Last winter's storm flooded the river valley.",
        {"access_count": 5},
        created_at=NOW - timedelta(days=20),
    ),
    Document(
        "garden",
        "Community gardens grow tomatoes by the school.",
        {"access_count": 12},
        created_at=NOW - timedelta(days=10),
    ),
]
LINKS = [
    Relation("turbine", "station", "FEEDS"),
    Relation("station", "hospital", "SUPPLIES"),
    Relation("storm", "turbine", "AFFECTS"),
    Relation("garden", "station", "NEAR"),
]


async def build(directory: Path) -> tuple[SQLiteGraphStore, LocalVectorStore, HashingEmbedder]:
    graph = SQLiteGraphStore(directory / "graph.db")
    vectors = LocalVectorStore(dimension=256)
    embedder = HashingEmbedder(256)
    await graph.store_documents(DOCUMENTS)
    await graph.create_relations(LINKS)
    embedded = await embedder.embed_documents([d.content or "" for d in DOCUMENTS])
    await vectors.upsert([VectorRecord(d.id, v, dict(d.metadata)) for d, v in zip(DOCUMENTS, embedded, strict=True)])
    return graph, vectors, embedder


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        graph, vectors, embedder = await build(Path(tmp))
        try:
            pipeline = Pipeline([SemanticSearch(vectors, embedder, limit=2), Hydrate(graph)])
            retriever = GraphExpansionRetriever(GraphFuseRetriever(pipeline, top_k=2), graph, depth=1)
            engine = RetrieverQueryEngine.from_args(
                retriever,
                llm=MockLLM(),
                node_postprocessors=[
                    TemporalDecayPostprocessor(half_life=timedelta(days=90), clock=lambda: NOW),
                    PageRankPostprocessor(graph),
                    AccessPostprocessor(),
                    WeightedFusionPostprocessor(
                        weights={"semantic": 0.4, "graph": 0.2, "temporal": 0.2, "pagerank": 0.1, "access": 0.1}
                    ),
                ],
            )
            response = await engine.aquery("What feeds the power station?")
            for nws in response.source_nodes:
                signals = nws.node.metadata[SIGNALS_KEY]
                shown = " ".join(f"{name}={value:.2f}" for name, value in sorted(signals.items()))
                print(f"{nws.node.node_id:<9} score={nws.score:.3f} {shown}")
        finally:
            await graph.close()
            await vectors.close()


if __name__ == "__main__":
    asyncio.run(main())
