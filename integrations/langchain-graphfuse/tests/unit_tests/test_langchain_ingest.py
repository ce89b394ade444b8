"""source_records: what a LangChain loader loaded, indexed by GraphFuse, retrieved through the graph."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from langchain_core.document_loaders import BaseLoader, Blob
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_graphfuse import GraphExpansionRunnable, GraphFuseRetriever, source_records

from graphfuse import InvalidInput, presets, run_sync
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import LINKS_TO, MENTIONS, Indexer, TitleLinker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore


def test_loader_output_becomes_a_graph_the_retriever_walks() -> None:
    # What TextLoader / a PDF loader / WebBaseLoader put in metadata: source, page, title.
    loaded = [
        LCDocument(
            page_content="Project Falcon rewrites routing. Its maps come from Atlas Maps.",
            metadata={"source": "notes/falcon.txt", "title": "Project Falcon"},
        ),
        LCDocument(
            page_content="Atlas Maps serves map tiles.",
            metadata={"source": "manual.pdf", "page": 0, "title": "Atlas Maps"},
        ),
        LCDocument(page_content="", metadata={"source": "manual.pdf", "page": 1}),  # a blank page
        LCDocument(
            page_content="Jonas Berg carries the Atlas pager.",
            metadata={"source": "manual.pdf", "page": 2, "created_at": "2025-02-03T04:05:06Z"},
        ),
        LCDocument(id="memo-7", page_content="A memo.", metadata={"source": "https://example.com/memo"}),
    ]
    skipped: list[str] = []
    records = source_records(loaded, on_skip=lambda doc_id, why: skipped.append(doc_id))
    assert [r.id for r in records] == ["notes/falcon.txt", "manual.pdf#page=0", "manual.pdf#page=2", "memo-7"]
    assert skipped == ["manual.pdf#page=1"]
    assert records[1].title == "Atlas Maps"
    assert dict(records[1].metadata) == {"source": "manual.pdf", "page": 0}
    assert records[2].created_at == datetime(2025, 2, 3, 4, 5, 6, tzinfo=timezone.utc)

    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=256)
    Indexer(graph, vectors, embedder, extractors=[TitleLinker()]).index(records)
    found = run_sync(graph.relations(["notes/falcon.txt"]))
    assert [(r.source, r.target, r.type) for r in found] == [("notes/falcon.txt", "manual.pdf#page=0", MENTIONS)]

    retriever = GraphFuseRetriever(
        pipeline=presets.no_rerank(graph, vectors, embedder), k=2, options={"semantic": {"limit": 1}}
    )
    docs = retriever.invoke("Project Falcon rewrites routing")
    assert [d.id for d in docs] == ["notes/falcon.txt", "manual.pdf#page=0"]
    assert docs[1].metadata["graphfuse"]["signals"]["graph"] > 0  # reached through the mention


def test_an_id_key_and_bad_input() -> None:
    (rec,) = source_records([LCDocument(page_content="x", metadata={"doc_key": "k1", "source": "s"})], id_key="doc_key")
    assert rec.id == "k1"
    lazy = (LCDocument(page_content=f"page {n}", metadata={"source": "a.pdf", "page": n}) for n in range(2))
    assert [r.id for r in source_records(lazy)] == ["a.pdf#page=0", "a.pdf#page=1"]  # as loader.lazy_load() gives
    with pytest.raises(InvalidInput, match="got a single Document"):
        source_records(LCDocument(page_content="x"))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="document 0: no id"):
        source_records([LCDocument(page_content="no id, no source")])
    with pytest.raises(InvalidInput, match="document 1: expected a LangChain Document, got dict"):
        source_records([LCDocument(page_content="x", metadata={"source": "a"}), {"page_content": "y"}])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match=r"1 document id\(s\) given twice: 'a.txt'"):
        source_records([LCDocument(page_content=t, metadata={"source": "a.txt"}) for t in ("one", "two")])


def test_chunks_in_another_vector_store_find_their_document_in_the_graph_by_an_id_key() -> None:
    loaded = [
        LCDocument(
            page_content="Project Falcon rewrites routing. Its maps come from Atlas Maps.",
            metadata={"source": "falcon.txt", "title": "Project Falcon"},
        ),
        LCDocument(
            page_content="Atlas Maps serves map tiles.",
            metadata={"source": "atlas.pdf", "page": 3, "title": "Atlas Maps"},
        ),
    ]
    for doc in loaded:  # one graph id per loaded document, copied onto its chunks by any splitter
        doc.metadata["graph_id"] = f"{doc.metadata['source']}#page={doc.metadata.get('page', 0)}"
    graph = InMemoryGraphStore()
    Indexer(graph, LocalVectorStore(), HashingEmbedder(dimension=64), extractors=[TitleLinker()]).index(
        source_records(loaded, id_key="graph_id")
    )
    # The application's own store holds chunks (here: one sentence each), with the metadata copied.
    chunks = [
        LCDocument(page_content=sentence.strip() + ".", metadata=dict(doc.metadata))
        for doc in loaded
        for sentence in doc.page_content.split(".")
        if sentence.strip()
    ]
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(chunks)
    falcon_chunks = [c for c in store.similarity_search("routing", k=10) if c.metadata["source"] == "falcon.txt"]
    expanded = GraphExpansionRunnable(graph, id_key="graph_id").invoke(falcon_chunks)
    assert "atlas.pdf#page=3" in {d.metadata.get("graph_id") or d.id for d in expanded}


class MarkdownFolderLoader(BaseLoader):
    """What ``DirectoryLoader(path, glob="**/*.md", loader_cls=TextLoader)`` of langchain-community
    yields (not installed here): one document per file, its text as read, ``metadata={"source":
    str(path)}`` with the path under the folder given; the file is read through langchain-core's
    ``Blob``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def lazy_load(self) -> Iterator[LCDocument]:
        for file in sorted(self.path.glob("**/*.md")):
            blob = Blob.from_path(file)
            yield LCDocument(page_content=blob.as_string(), metadata={"source": str(blob.source)})


def test_a_docs_folder_read_by_a_directory_loader_builds_the_cli_graph(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from graphfuse.cli import app
    from graphfuse.stores import SQLiteGraphStore

    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "index.md").write_text(
        "# Atlas Maps { #atlas }\n\nSee the [guide](guide/tiles.md) and [[faq]].\n\n<!-- [old](old.md) -->\n"
    )
    (docs / "faq.md").write_text('---\ntitle: ""\n---\n# FAQ\n\n:::note\nTiles: [tiles](guide/tiles.md#cache).\n:::\n')
    (docs / "guide" / "tiles.md").write_text("# Tiles\n\nBack to [the start](../index.md). [Out](../../x.md).\n")

    result = CliRunner().invoke(app, ["index", str(docs), "--store", str(tmp_path / "s"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    ids = ["index.md", "faq.md", "guide/tiles.md"]
    stored = run_sync(SQLiteGraphStore(str(tmp_path / "s" / "graph.sqlite")).relations(ids))
    cli_links = {(r.source, r.target) for r in stored if r.type == LINKS_TO}
    assert cli_links == {
        ("index.md", "guide/tiles.md"),
        ("index.md", "faq.md"),
        ("faq.md", "guide/tiles.md"),
        ("guide/tiles.md", "index.md"),
    }

    records = source_records(MarkdownFolderLoader(docs).lazy_load())
    assert [r.id for r in records] == [str(docs / i) for i in ("faq.md", "guide/tiles.md", "index.md")]
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=64)
    Indexer.for_records(records, graph, vectors, embedder).index(records)
    rels = run_sync(graph.relations([r.id for r in records]))
    rel = {str(docs / i): i for i in ids}
    assert {(rel[r.source], rel[r.target]) for r in rels if r.type == LINKS_TO} == cli_links
    assert [r.title for r in records] == ["FAQ", "Tiles", "Atlas Maps"]
    assert records[0].text == "# FAQ\n\nTiles: tiles.\n"
