"""One reader's documents in both: LlamaIndex's VectorStoreIndex, and GraphFuse's graph built by
source_records + Indexer, so that the graph postprocessors find the index's nodes in the graph."""

from __future__ import annotations

from pathlib import Path

from llama_index.core import MockEmbedding, SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.postprocessor.graphfuse import GraphExpansionPostprocessor
from llama_index.retrievers.graphfuse import source_records

from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, TitleLinker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore


def test_the_graph_postprocessors_find_a_vector_store_indexs_nodes_in_the_graph(tmp_path: Path) -> None:
    (tmp_path / "falcon.txt").write_text("Project Falcon rewrites routing. " * 40 + "Its maps come from Atlas Maps.")
    (tmp_path / "atlas.txt").write_text("Atlas Maps serves map tiles. Jonas Berg carries its pager.")
    docs = SimpleDirectoryReader(str(tmp_path), filename_as_id=True).load_data()
    for doc in docs:
        doc.metadata["title"] = "Atlas Maps" if doc.metadata["file_name"] == "atlas.txt" else "Project Falcon"

    # GraphFuse's graph, under the documents' own ids (what LlamaIndex's chunks carry as ref_doc_id).
    graph = InMemoryGraphStore()
    Indexer(graph, LocalVectorStore(), HashingEmbedder(dimension=64), extractors=[TitleLinker()]).index(
        source_records(docs)
    )
    falcon_id = next(d.doc_id for d in docs if d.metadata["file_name"] == "falcon.txt")
    atlas_id = next(d.doc_id for d in docs if d.metadata["file_name"] == "atlas.txt")

    # LlamaIndex's own index, split into chunks; its retriever finds only Falcon's chunks here.
    index = VectorStoreIndex.from_documents(
        docs, embed_model=MockEmbedding(embed_dim=8), transformations=[SentenceSplitter(chunk_size=64, chunk_overlap=0)]
    )
    nodes = [n for n in index.as_retriever(similarity_top_k=50).retrieve("routing") if n.node.ref_doc_id == falcon_id]
    assert len(nodes) > 1  # several chunks of one document
    expanded = GraphExpansionPostprocessor(graph).postprocess_nodes(nodes, query_str="routing")
    # Falcon's chunks are one document to the graph, which names Atlas Maps: the expansion adds it.
    assert atlas_id in {n.node.node_id for n in expanded}
