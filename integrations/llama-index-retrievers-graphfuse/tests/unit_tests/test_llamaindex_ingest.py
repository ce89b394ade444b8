"""source_records: what a LlamaIndex reader loaded, indexed by GraphFuse, retrieved through the graph."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from llama_index.core import Document as LIDocument
from llama_index.core import SimpleDirectoryReader
from llama_index.core.schema import TextNode
from llama_index.retrievers.graphfuse import GraphFuseRetriever, source_records

from graphfuse import InvalidInput, presets, run_sync
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import MENTIONS, Indexer, TitleLinker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore


def test_a_directory_reader_corpus_becomes_a_graph_the_retriever_walks(tmp_path: Path) -> None:
    (tmp_path / "falcon.txt").write_text("Project Falcon rewrites routing. Its maps come from Atlas Maps.")
    (tmp_path / "atlas.txt").write_text("Atlas Maps serves map tiles; Jonas Berg carries its pager.")
    docs = SimpleDirectoryReader(str(tmp_path), filename_as_id=True).load_data()
    for doc in docs:  # a reader's metadata, plus a title the application adds
        doc.metadata["title"] = "Atlas Maps" if doc.metadata["file_name"] == "atlas.txt" else "Project Falcon"

    records = source_records(docs, id_key="file_name", created_at_key="last_modified_date")
    assert [r.id for r in records] == ["atlas.txt", "falcon.txt"]
    falcon = records[1]
    assert falcon.title == "Project Falcon"
    assert falcon.text == "Project Falcon rewrites routing. Its maps come from Atlas Maps."
    assert falcon.created_at is not None
    assert falcon.created_at.tzinfo == timezone.utc
    assert falcon.metadata["file_name"] == "falcon.txt"
    assert "last_modified_date" not in falcon.metadata
    assert "title" not in falcon.metadata

    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=256)
    report = Indexer(graph, vectors, embedder, extractors=[TitleLinker()]).index(records)
    assert report.documents == 2
    rels = run_sync(graph.relations(["falcon.txt"]))
    assert [(r.source, r.target, r.type) for r in rels] == [("falcon.txt", "atlas.txt", MENTIONS)]

    # The vector search finds one document; the other is reached through the mention.
    pipeline = presets.no_rerank(graph, vectors, embedder)
    retriever = GraphFuseRetriever(pipeline, similarity_top_k=2, options={"semantic": {"limit": 1}})
    nodes = retriever.retrieve("Project Falcon rewrites routing")
    assert [n.node.node_id for n in nodes] == ["falcon.txt", "atlas.txt"]
    signals = nodes[1].node.metadata["graphfuse_signals"]
    assert "semantic" not in signals
    assert signals["graph"] > 0


def test_node_ids_links_and_blank_documents() -> None:
    skipped: list[str] = []
    records = source_records(
        [
            LIDocument(text="First.", id_="a", metadata={"links": ["b"], "created_at": "2024-01-02T03:04:05Z"}),
            TextNode(text="Second.", id_="b"),
            LIDocument(text="   ", id_="blank"),
        ],
        on_skip=lambda doc_id, why: skipped.append(doc_id),
    )
    assert [(r.id, r.links) for r in records] == [("a", ("b",)), ("b", ())]
    assert records[0].created_at == datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert skipped == ["blank"]


def test_bad_input_is_named() -> None:
    with pytest.raises(InvalidInput, match="got a single node"):
        source_records(LIDocument(text="x"))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="document 1: expected a LlamaIndex Document or node, got str"):
        source_records([LIDocument(text="x", id_="a"), "text"])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match=r"document 0: no id"):
        source_records([LIDocument(text="x", id_="a")], id_key="path")
    with pytest.raises(InvalidInput, match=r"1 document id\(s\) given twice: 'a'"):
        source_records([LIDocument(text="x", id_="a"), LIDocument(text="y", id_="a")])
