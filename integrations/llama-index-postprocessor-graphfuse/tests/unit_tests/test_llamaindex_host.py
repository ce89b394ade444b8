"""Our components inside LlamaIndex's own: query engines, SimilarityPostprocessor, spans."""

from __future__ import annotations

from _llamaindex_post_corpus import DOCS, clock
from llama_index.core import MockEmbedding, VectorStoreIndex
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.span_handlers import SimpleSpanHandler
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    PageRankPostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse import (
    SIGNALS_KEY,
    GraphExpansionRetriever,
    GraphFuseRetriever,
)

from graphfuse import Pipeline
from graphfuse.stages import Hydrate, SemanticSearch


def text_nodes() -> list[TextNode]:
    out = []
    for d in DOCS:
        meta = dict(d.metadata)
        if d.created_at is not None:
            meta["created_at"] = d.created_at.isoformat()
        out.append(TextNode(id_=d.id, text=d.content or "", metadata=meta))
    return out


def chain(graph_store: object) -> list[object]:
    return [
        TemporalDecayPostprocessor(clock=clock),
        PageRankPostprocessor(graph_store),
        AccessPostprocessor(),
        WeightedFusionPostprocessor(weights={"semantic": 0.5, "temporal": 0.2, "pagerank": 0.15, "access": 0.15}),
    ]


async def test_vector_store_index_query_engine_with_our_postprocessors(graph_store: object) -> None:
    index = VectorStoreIndex(text_nodes(), embed_model=MockEmbedding(embed_dim=8))
    engine = index.as_query_engine(similarity_top_k=4, node_postprocessors=chain(graph_store), llm=MockLLM())
    response = engine.query("what powers the grid")
    assert len(response.source_nodes) == 4
    scores = [n.score for n in response.source_nodes]
    assert scores == sorted(scores, reverse=True)
    assert all(
        set(n.node.metadata[SIGNALS_KEY]) == {"semantic", "temporal", "pagerank", "access"}
        for n in response.source_nodes
    )
    aresponse = await engine.aquery("what powers the grid")
    assert [n.node.node_id for n in aresponse.source_nodes] == [n.node.node_id for n in response.source_nodes]


async def test_retriever_query_engine_with_similarity_cutoff_and_graph_expansion(
    graph_store: object, vector_store: object, embedder: object
) -> None:
    pipeline = Pipeline([SemanticSearch(vector_store, embedder), Hydrate(graph_store)])
    retriever = GraphExpansionRetriever(GraphFuseRetriever(pipeline, top_k=1), graph_store, depth=1)
    engine = RetrieverQueryEngine.from_args(
        retriever,
        llm=MockLLM(),
        node_postprocessors=[*chain(graph_store), SimilarityPostprocessor(similarity_cutoff=0.01)],
    )
    response = await engine.aquery("Alpha reactors power the northern grid")
    ids = [n.node.node_id for n in response.source_nodes]
    assert ids[0] == "a"
    assert "b" in ids
    assert all(n.score is not None and n.score >= 0.01 for n in response.source_nodes)
    sync_ids = [n.node.node_id for n in engine.query("Alpha reactors power the northern grid").source_nodes]
    assert sync_ids == ids


async def test_our_components_open_llamaindex_spans(
    graph_store: object, vector_store: object, embedder: object
) -> None:
    recorder = SimpleSpanHandler()
    root = get_dispatcher()
    root.add_span_handler(recorder)
    try:
        pipeline = Pipeline([SemanticSearch(vector_store, embedder), Hydrate(graph_store)])  # type: ignore[arg-type]
        retriever = GraphExpansionRetriever(GraphFuseRetriever(pipeline, top_k=2), graph_store)  # type: ignore[arg-type]
        nodes = await retriever.aretrieve("harbour")
        await TemporalDecayPostprocessor(clock=clock).apostprocess_nodes(nodes)
        TemporalDecayPostprocessor(clock=clock).postprocess_nodes(nodes)
    finally:
        root.span_handlers.remove(recorder)
    names = {span.id_.split("-")[0] for span in recorder.completed_spans}
    assert {
        "GraphFuseRetriever._aretrieve",
        "GraphExpansionRetriever._aretrieve",
        "TemporalDecayPostprocessor._apostprocess_nodes",
        "TemporalDecayPostprocessor._postprocess_nodes",
    } <= names
