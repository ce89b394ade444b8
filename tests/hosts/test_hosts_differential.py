"""One behaviour everywhere: the same seeds through the core pipeline, every LlamaIndex retriever and
postprocessor chain and every LangChain retriever, runnable chain and compressor give the same ids,
order and signals, on an entity-graph store and on a chunked store."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langchain_core.documents import Document as LCDocument
from langchain_core.runnables import RunnableLambda
from langchain_graphfuse import (
    AccessPopularityRunnable,
    GraphExpansionRunnable,
    GraphFuseCompressor,
    PageRankRunnable,
    TemporalDecayRunnable,
    WeightedFusion,
)
from langchain_graphfuse import GraphExpansionRetriever as LCExpansionRetriever
from langchain_graphfuse import GraphFuseRetriever as LCRetriever
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    GraphExpansionPostprocessor,
    PageRankPostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse import GraphExpansionRetriever, GraphFuseRetriever

from graphfuse import Candidate, Document, Pipeline, Query, RunContext
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import ENTITY_PREFIX, Indexer, SourceRecord, TextEntityExtractor, TokenChunker
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import AccessPopularity, GraphExpansion, PageRank, TemporalDecay
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
WEIGHTS = {"semantic": 0.3, "graph": 0.3, "temporal": 0.15, "pagerank": 0.15, "access": 0.1}
Ranked = list[tuple[str, dict[str, float]]]


def clock() -> datetime:
    return NOW


def when(days: int) -> datetime:
    return NOW - timedelta(days=days)


CHATS = [
    SourceRecord(
        "chat1", "Greta Berg: I moved to Hamburg last year.", metadata={"access_count": 3}, created_at=when(5)
    ),
    SourceRecord("chat2", "Wolfgang Schulz: My cousin Greta Berg plays drums.", created_at=when(40)),
    SourceRecord(
        "chat3", "Wolfgang Schulz sold his bike in Hamburg.", metadata={"access_count": 9}, created_at=when(200)
    ),
    SourceRecord("chat4", "Nobody here knows anyone else.", created_at=when(1)),
]
LONG = " ".join(f"Turbine{i % 5} near Harbour{i % 3} station." for i in range(30))
PAGES = [
    SourceRecord("manual", LONG, title="Manual", metadata={"access_count": 12}, created_at=when(10)),
    SourceRecord("notes", "Harbour1 station keeps the Manual at hand.", created_at=when(100), links=("manual",)),
]


class Seeds:
    """The seeds as a first stage: the given documents with their semantic signal, from the store."""

    name = "seeds"

    def __init__(self, store: InMemoryGraphStore, seeds: Sequence[tuple[str, float]]) -> None:
        self._store, self._seeds = store, seeds

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        docs = await self._store.get_documents([i for i, _ in self._seeds])
        return [Candidate(docs[i], {"semantic": s}) for i, s in self._seeds]


def stages(store: InMemoryGraphStore) -> list[Any]:
    return [GraphExpansion(store), TemporalDecay(clock=clock), PageRank(store), AccessPopularity()]


async def build(kind: str) -> tuple[InMemoryGraphStore, list[tuple[str, float]]]:
    store = InMemoryGraphStore()
    vectors = LocalVectorStore()
    if kind == "entity-graph":
        indexer = Indexer(store, vectors, HashingEmbedder(8), extractors=[TextEntityExtractor()], entity_graph=True)
        await indexer.aindex(CHATS)
        assert any(r.id.startswith(ENTITY_PREFIX) for r in await store.related(["chat2"], depth=1))
        return store, [("chat2", 0.9), ("chat4", 0.35)]
    indexer = Indexer(store, vectors, HashingEmbedder(8), chunker=TokenChunker(max_tokens=40, overlap=5))
    await indexer.aindex(PAGES)
    assert (await store.get_document("manual#1")).metadata["parent_id"] == "manual"
    return store, [("manual#1", 0.8), ("notes", 0.6)]


def as_metadata(doc: Document) -> dict[str, Any]:
    return {**doc.metadata, "created_at": doc.created_at.isoformat() if doc.created_at else None}


async def seed_documents(store: InMemoryGraphStore, seeds: Sequence[tuple[str, float]]) -> list[Document]:
    docs = await store.get_documents([i for i, _ in seeds])
    return [docs[i] for i, _ in seeds]


class Fixed(BaseRetriever):
    def __init__(self, nodes: list[NodeWithScore]) -> None:
        self._nodes = nodes
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return list(self._nodes)


def from_nodes(nodes: list[NodeWithScore]) -> Ranked:
    return [(n.node.node_id, dict(n.node.metadata["graphfuse_signals"])) for n in nodes]


def from_documents(docs: Sequence[LCDocument]) -> Ranked:
    return [(d.id or "", dict(d.metadata["graphfuse"]["signals"])) for d in docs]


def assert_same(got: Ranked, expected: Ranked, who: str) -> None:
    assert [i for i, _ in got] == [i for i, _ in expected], who
    for (doc_id, signals), (_, wanted) in zip(got, expected, strict=True):
        assert signals == pytest.approx(wanted), f"{who}: {doc_id}"


@pytest.mark.parametrize("kind", ["entity-graph", "chunked"])
async def test_the_same_seeds_give_the_same_ranking_everywhere(kind: str) -> None:
    store, seeds = await build(kind)
    await store.pagerank()
    pipeline = Pipeline([Seeds(store, seeds), *stages(store)], WeightedScorer(WEIGHTS))
    results = await pipeline.aretrieve("q", 100)
    core: Ranked = [(r.id, dict(r.signals)) for r in results]
    assert not any(i.startswith(ENTITY_PREFIX) for i, _ in core)
    assert len(core) > len(seeds)  # the graph added documents
    docs = await seed_documents(store, seeds)
    scores = dict(seeds)

    # LlamaIndex: the retriever over the pipeline, the postprocessor chain, the expansion retriever + chain.
    nodes = [
        NodeWithScore(node=TextNode(id_=d.id, text=d.content or "", metadata=as_metadata(d)), score=scores[d.id])
        for d in docs
    ]
    signal_posts = [TemporalDecayPostprocessor(clock=clock), PageRankPostprocessor(store), AccessPostprocessor()]
    fusion = WeightedFusionPostprocessor(weights=WEIGHTS)
    assert_same(from_nodes(await GraphFuseRetriever(pipeline, top_k=100).aretrieve("q")), core, "GraphFuseRetriever")
    out = await GraphExpansionPostprocessor(store).apostprocess_nodes(nodes)
    for post in [*signal_posts, fusion]:
        out = await post.apostprocess_nodes(out)
    assert_same(from_nodes(out), core, "LlamaIndex postprocessors (async)")
    out = GraphExpansionPostprocessor(store).postprocess_nodes(nodes)
    for post in [*signal_posts, fusion]:
        out = post.postprocess_nodes(out)
    assert_same(from_nodes(out), core, "LlamaIndex postprocessors (sync)")
    out = await GraphExpansionRetriever(Fixed(nodes), store).aretrieve("q")
    for post in [*signal_posts, fusion]:
        out = await post.apostprocess_nodes(out)
    assert_same(from_nodes(out), core, "LlamaIndex GraphExpansionRetriever + postprocessors")

    # LangChain: the retriever over the pipeline, the runnable chain, the expansion retriever + chain, the compressor.
    lc_docs = [
        LCDocument(id=d.id, page_content=d.content or "", metadata={**as_metadata(d)}, type="Document") for d in docs
    ]
    seeded = [
        LCDocument(
            id=d.id,
            page_content=d.page_content,
            metadata={**d.metadata, "graphfuse": {"signals": {"semantic": scores[d.id or ""]}}},
        )
        for d in lc_docs
    ]
    tail = (
        TemporalDecayRunnable(clock=clock)
        | PageRankRunnable(store)
        | AccessPopularityRunnable()
        | WeightedFusion(WEIGHTS)
    )
    assert_same(
        from_documents(await LCRetriever(pipeline=pipeline, k=100).ainvoke("q")), core, "LangChain GraphFuseRetriever"
    )
    assert_same(
        from_documents(await (GraphExpansionRunnable(store) | tail).ainvoke(seeded)), core, "LangChain runnables"
    )
    assert_same(
        from_documents((GraphExpansionRunnable(store) | tail).invoke(seeded)), core, "LangChain runnables (sync)"
    )
    expanding = LCExpansionRetriever(retriever=RunnableLambda(lambda q: list(seeded)), graph_store=store)
    assert_same(
        from_documents(await (expanding | tail).ainvoke("q")), core, "LangChain GraphExpansionRetriever + runnables"
    )
    compressor = GraphFuseCompressor(*stages(store), scorer=WeightedScorer(WEIGHTS))
    assert_same(from_documents(await compressor.acompress_documents(seeded, "q")), core, "LangChain compressor")
