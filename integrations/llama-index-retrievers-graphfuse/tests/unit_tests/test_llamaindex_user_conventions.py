"""Written as a LlamaIndex user's code: GraphFuse beside LlamaIndex's own retrievers.

- Internal ``graphfuse_*`` bookkeeping never reaches a node, the LLM prompt or the embedded text.
- The same passage from GraphFuse and from a plain ``VectorStoreIndex`` is one node in
  ``QueryFusionRetriever``; chunks carry their parent document as ``ref_doc_id``.
- ``similarity_top_k`` and ``SimilarityPostprocessor`` cut-offs by the semantic similarity (the
  postprocessor side: test_llamaindex_postprocessor_conventions.py in llama-index-postprocessor-graphfuse).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from llama_index.core import MockEmbedding, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.retrievers.graphfuse import SIGNALS_KEY, GraphFuseRetriever

from graphfuse import InvalidInput, Pipeline, presets
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TokenChunker
from graphfuse.stores import LocalStore

PASSAGES = {
    "reactor": ("Alpha reactors power the northern grid.", {"topic": "energy"}),
    "harbour": ("The harbour substation was rebuilt after the flood.", {"topic": "infrastructure"}),
    "garden": ("Tomatoes grow best in a sunny garden bed.", {"topic": "gardening"}),
}
LONG = ("manual", " ".join(f"Step {i}: tighten bolt {i} on the turbine housing." for i in range(40)), {"topic": "ops"})


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[LocalStore]:
    opened = LocalStore.open(tmp_path / "store")
    embedder = HashingEmbedder(64)
    await opened.ause_embedder(embedder)
    records = [SourceRecord(i, text, metadata=meta) for i, (text, meta) in PASSAGES.items()]
    records.append(SourceRecord(LONG[0], LONG[1], metadata=LONG[2]))
    indexer = Indexer(opened.graph, opened.vectors, embedder, chunker=TokenChunker(max_tokens=40, overlap=0))
    await indexer.aindex(records)
    yield opened
    await opened.aclose()


def graphfuse_pipeline(store: LocalStore) -> Pipeline:
    return presets.no_rerank(store.graph, store.vectors, HashingEmbedder(64))


async def test_no_graphfuse_bookkeeping_reaches_nodes_prompts_or_embeddings(store: LocalStore) -> None:
    retriever = GraphFuseRetriever(graphfuse_pipeline(store), similarity_top_k=10)
    nodes = await retriever.aretrieve("turbine bolts and the northern grid")
    assert nodes
    for nws in nodes:
        node = nws.node
        internal = [
            k for k in node.metadata if k.startswith("graphfuse_") and k not in (SIGNALS_KEY, "graphfuse_contributions")
        ]
        assert internal == [], internal
        for mode in (MetadataMode.LLM, MetadataMode.EMBED):
            assert "graphfuse" not in node.get_content(metadata_mode=mode)
        assert node.metadata["topic"]  # the user's own metadata is there


async def test_query_fusion_lists_a_passage_once(store: LocalStore) -> None:
    # The user's own vector index over the same passages (same text, same metadata).
    index = VectorStoreIndex(
        [TextNode(text=text, metadata=dict(meta)) for text, meta in PASSAGES.values()],
        embed_model=MockEmbedding(embed_dim=8),
    )
    fusion = QueryFusionRetriever(
        [GraphFuseRetriever(graphfuse_pipeline(store), similarity_top_k=3), index.as_retriever(similarity_top_k=3)],
        similarity_top_k=10,
        num_queries=1,
        mode="reciprocal_rerank",
        llm=MockLLM(),
        use_async=True,
    )
    for nodes in (await fusion.aretrieve("Alpha reactors power the grid"), fusion.retrieve("harbour flood")):
        texts = [n.node.get_content(metadata_mode=MetadataMode.NONE) for n in nodes]
        assert len(texts) == len(set(texts)), texts
        assert set(texts) >= {text for text, _ in PASSAGES.values()} & set(texts)
        assert len(texts) >= 3


async def test_same_document_same_node_and_chunks_name_their_parent(store: LocalStore) -> None:
    retriever = GraphFuseRetriever(graphfuse_pipeline(store), similarity_top_k=20)
    first = {n.node.node_id: n.node for n in await retriever.aretrieve("turbine housing bolts")}
    second = {n.node.node_id: n.node for n in retriever.retrieve("turbine housing bolts, step 3")}
    shared = set(first) & set(second)
    assert shared
    for node_id in shared:  # the same document: the same id and the same hash, whatever the signals
        assert first[node_id].hash == second[node_id].hash
    chunks = [n for n in first.values() if n.node_id.startswith("manual#")]
    assert chunks
    assert all(n.ref_doc_id == "manual" for n in chunks)
    whole = first.get("reactor") or second.get("reactor")
    if whole is not None:
        assert whole.ref_doc_id == "reactor"


async def test_similarity_top_k_and_a_cut_off_by_the_semantic_similarity(store: LocalStore) -> None:
    pipeline = graphfuse_pipeline(store)
    assert len(await GraphFuseRetriever(pipeline, similarity_top_k=2).aretrieve("reactors")) == 2
    assert GraphFuseRetriever(pipeline, top_k=3).similarity_top_k == 3
    with pytest.raises(InvalidInput, match="not both"):
        GraphFuseRetriever(pipeline, similarity_top_k=2, top_k=3)
    with pytest.raises(InvalidInput, match="similarity_top_k must be a positive integer"):
        GraphFuseRetriever(pipeline, similarity_top_k=0)

    by_cosine = GraphFuseRetriever(pipeline, similarity_top_k=10, score_signal="semantic")
    nodes = await by_cosine.aretrieve("Alpha reactors power the northern grid")
    assert all(n.score == n.node.metadata[SIGNALS_KEY].get("semantic", 0.0) for n in nodes)
    kept = SimilarityPostprocessor(similarity_cutoff=0.5).postprocess_nodes(nodes)
    assert [n.node.node_id for n in kept] == ["reactor"]  # graph neighbours without a cosine are cut
    fused = await GraphFuseRetriever(pipeline, similarity_top_k=10).aretrieve("Alpha reactors power the northern grid")
    assert [n.node.node_id for n in fused] == [n.node.node_id for n in nodes]  # same order either way
