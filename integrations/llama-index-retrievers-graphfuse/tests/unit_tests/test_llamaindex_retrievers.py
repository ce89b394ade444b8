"""GraphFuseRetriever, GraphExpansionRetriever and FusionRetriever, alone and around LlamaIndex retrievers."""

from __future__ import annotations

import pytest
from _llamaindex_corpus import DOCS
from llama_index.core import Document as LlamaDocument
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.retrievers.graphfuse import (
    SIGNALS_KEY,
    FusionRetriever,
    GraphExpansionRetriever,
    GraphFuseEmbedding,
    GraphFuseRetriever,
)

from graphfuse import InvalidInput, NotFound, Pipeline
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import GraphExpansion, Hydrate, SemanticSearch


class FixedRetriever(BaseRetriever):
    """Returns fixed nodes; its sync path raises when asked to (to prove the async path skips it)."""

    def __init__(self, found: list[tuple[str, float]], *, sync_raises: bool = False) -> None:
        self._found = found
        self._sync_raises = sync_raises
        super().__init__()

    def _nodes(self) -> list[NodeWithScore]:
        return [NodeWithScore(node=TextNode(id_=i, text=f"text {i}"), score=s) for i, s in self._found]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self._sync_raises:
            raise AssertionError("sync retrieve called")
        return self._nodes()

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes()


@pytest.fixture
def pipeline(graph_store: object, vector_store: object, embedder: object) -> Pipeline:
    return Pipeline(
        [SemanticSearch(vector_store, embedder), Hydrate(graph_store), GraphExpansion(graph_store, depth=1)],
        WeightedScorer({"semantic": 0.7, "graph": 0.3}),
    )


async def test_graphfuse_retriever_async_and_sync(pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch) -> None:
    retriever = GraphFuseRetriever(pipeline, top_k=3, filter={"tenant": "acme"})
    sync_nodes = retriever.retrieve("harbour substation flood")
    monkeypatch.setattr(GraphFuseRetriever, "_retrieve", lambda *a: (_ for _ in ()).throw(AssertionError("sync")))
    nodes = await retriever.aretrieve("harbour substation flood")
    assert [n.node.node_id for n in nodes] == [n.node.node_id for n in sync_nodes]
    assert len(nodes) == 3
    assert all(n.node.metadata["tenant"] == "acme" for n in nodes)
    top = nodes[0]
    assert top.node.get_content() == {d.id: d.content for d in DOCS}[top.node.node_id]
    assert set(top.node.metadata[SIGNALS_KEY]) >= {"semantic", "graph"}
    assert top.score == pytest.approx(sum(top.node.metadata["graphfuse_contributions"].values()))
    assert SIGNALS_KEY not in top.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "created_at" in top.node.metadata


async def test_graphfuse_retriever_bad_input(pipeline: Pipeline) -> None:
    with pytest.raises(InvalidInput, match="top_k"):
        GraphFuseRetriever(pipeline, top_k=0)
    with pytest.raises(InvalidInput, match="Pipeline"):
        GraphFuseRetriever(object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="query text"):
        await GraphFuseRetriever(pipeline).aretrieve("   ")


async def test_graph_expansion_retriever_around_a_vector_store_index(graph_store: object, embedder: object) -> None:
    nodes = [TextNode(id_=d.id, text=d.content or "", metadata=dict(d.metadata)) for d in DOCS]
    index = VectorStoreIndex(nodes, embed_model=GraphFuseEmbedding(embedder))
    inner = index.as_retriever(similarity_top_k=1)
    retriever = GraphExpansionRetriever(inner, graph_store, depth=2, filter={"tenant": "acme"})
    found = await retriever.aretrieve("Alpha reactors power the northern grid")
    ids = [n.node.node_id for n in found]
    assert ids == ["a", "b", "c"]  # seed a, then b (1 hop), c (2 hops); x is another tenant's
    seed_score = found[0].score
    assert seed_score is not None
    assert found[1].score == pytest.approx(seed_score * 0.5)
    # The core stage: graph = the seed's strength (its score) * decay ** distance, and the new node's score.
    assert found[2].node.metadata[SIGNALS_KEY] == {"graph": pytest.approx(seed_score * 0.25)}
    assert found[2].score == pytest.approx(seed_score * 0.25)
    assert [n.node.node_id for n in retriever.retrieve("Alpha reactors power the northern grid")] == ids


async def test_graph_expansion_retriever_ids_from_metadata_and_unknown_nodes(graph_store: object) -> None:
    inner = FixedRetriever([("chunk-1", 0.9), ("chunk-2", 0.8)], sync_raises=True)
    with pytest.raises(NotFound, match="chunk-1"):
        await GraphExpansionRetriever(inner, graph_store, unknown="error").aretrieve("q")
    kept = await GraphExpansionRetriever(inner, graph_store).aretrieve("q")
    assert [n.node.node_id for n in kept] == ["chunk-1", "chunk-2"]

    class MetaRetriever(FixedRetriever):
        def _nodes(self) -> list[NodeWithScore]:
            return [NodeWithScore(node=TextNode(id_="chunk-1", text="t", metadata={"doc": "d"}), score=0.6)]

    found = await GraphExpansionRetriever(
        MetaRetriever([], sync_raises=True), graph_store, id_key="doc", depth=1
    ).aretrieve("q")
    assert [n.node.node_id for n in found] == ["chunk-1", "c"]
    with pytest.raises(InvalidInput, match="'missing'"):
        await GraphExpansionRetriever(inner, graph_store, id_key="missing").aretrieve("q")


async def test_graph_expansion_retriever_min_seed_score(graph_store: object) -> None:
    class MetaRetriever(FixedRetriever):
        def _nodes(self) -> list[NodeWithScore]:
            return [NodeWithScore(node=TextNode(id_="chunk-1", text="t", metadata={"doc": "d"}), score=0.2)]

    weak = MetaRetriever([], sync_raises=True)
    strict = await GraphExpansionRetriever(weak, graph_store, id_key="doc", depth=1, min_seed_score=0.5).aretrieve("q")
    assert [n.node.node_id for n in strict] == ["chunk-1"]  # below the threshold: not expanded from
    loose = await GraphExpansionRetriever(weak, graph_store, id_key="doc", depth=1, min_seed_score=0.1).aretrieve("q")
    assert [n.node.node_id for n in loose] == ["chunk-1", "c"]
    for bad in (True, float("nan"), "0.5"):
        with pytest.raises(InvalidInput, match="min_seed_score"):
            GraphExpansionRetriever(weak, graph_store, min_seed_score=bad)  # type: ignore[arg-type]


async def test_fusion_rrf_honours_weights_and_counts_a_duplicate_once() -> None:
    vector = FixedRetriever([("a", 0.9), ("b", 0.8), ("c", 0.7)], sync_raises=True)
    keyword = FixedRetriever([("c", 0.9), ("c", 0.85), ("b", 0.5)], sync_raises=True)
    even = await FusionRetriever({"vector": vector, "keyword": keyword}, normalize=False).aretrieve("q")
    # c: vector rank 3 + keyword rank 1 (its duplicate counts once); b: rank 2 + rank 2.
    scores = {n.node.node_id: n.score for n in even}
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 62)
    weights = {"vector": 10.0, "keyword": 1.0}
    heavy = await FusionRetriever({"vector": vector, "keyword": keyword}, weights, normalize=False).aretrieve("q")
    assert [n.node.node_id for n in heavy] == ["b", "c", "a"]
    assert [n.node.node_id for n in even] == ["c", "b", "a"]
    assert {n.node.node_id: n.score for n in heavy}["a"] == pytest.approx(10 / 61)
    assert {n.node.node_id: n.score for n in heavy}["c"] == pytest.approx(10 / 63 + 1 / 61)
    muted = await FusionRetriever([vector, keyword], [0.0, 1.0], top_k=5).aretrieve("q")
    assert [n.node.node_id for n in muted] == ["c", "b"]
    # Normalised (the default): divided by the best possible fused score, so first everywhere = 1.0.
    normalised = await FusionRetriever({"vector": vector, "keyword": keyword}, weights).aretrieve("q")
    assert {n.node.node_id: n.score for n in normalised}["c"] == pytest.approx((10 / 63 + 1 / 61) / (11 / 61))
    both_first = await FusionRetriever([vector, vector]).aretrieve("q")
    assert both_first[0].score == 1.0


def test_fusion_weighted_mode_and_bad_input() -> None:
    vector = FixedRetriever([("a", 0.9), ("b", 0.0)])
    other = FixedRetriever([("b", 0.5)])
    out = FusionRetriever({"v": vector, "o": other}, {"v": 1.0, "o": 2.0}, mode="weighted", normalize=False).retrieve(
        "q"
    )
    assert [(n.node.node_id, n.score) for n in out] == [("b", 1.0), ("a", 0.9)]
    out = FusionRetriever({"v": vector, "o": other}, {"v": 1.0, "o": 2.0}, mode="weighted").retrieve("q")
    assert [(n.node.node_id, n.score) for n in out] == [("b", pytest.approx(1 / 3)), ("a", pytest.approx(0.3))]
    with pytest.raises(InvalidInput, match="> 1"):
        FusionRetriever([FixedRetriever([("a", 3.0)])], mode="weighted").retrieve("q")
    with pytest.raises(InvalidInput, match="unknown retrievers"):
        FusionRetriever({"v": vector}, {"w": 1.0})
    with pytest.raises(InvalidInput, match="mode"):
        FusionRetriever([vector], mode="max")
    with pytest.raises(InvalidInput, match="greater than zero"):
        FusionRetriever([vector], [0.0])


async def test_graph_ids_default_to_the_source_document_of_a_chunk(graph_store: object, embedder: object) -> None:
    documents = [LlamaDocument(text=d.content or "", doc_id=d.id, metadata=dict(d.metadata)) for d in DOCS]
    index = VectorStoreIndex.from_documents(documents, embed_model=GraphFuseEmbedding(embedder))
    inner = index.as_retriever(similarity_top_k=1)
    found = await GraphExpansionRetriever(inner, graph_store, depth=1, unknown="error").aretrieve(
        "Flood defences were funded by the city council."
    )
    seed = found[0].node
    assert seed.node_id != "d"  # a chunk id chosen by LlamaIndex...
    assert seed.ref_doc_id == "d"  # ...whose source document is the graph document d
    assert [n.node.node_id for n in found[1:]] == ["c"]
