"""source_records: what a LlamaIndex reader loaded, indexed by GraphFuse, retrieved through the graph."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import Document as LIDocument
from llama_index.core import SimpleDirectoryReader
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.retrievers.graphfuse import GraphFuseRetriever, source_records
from llama_index.retrievers.graphfuse.nodes import CONTRIBUTIONS_KEY, SIGNALS_KEY

from graphfuse import InvalidInput, presets, run_sync
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import (
    EXCLUDED_KEYS,
    LINKS_TO,
    MENTIONS,
    Indexer,
    SourceRecord,
    TitleLinker,
    TokenChunker,
    excluded_keys,
)
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


def _docs_folder(root: Path) -> Path:
    """A small MkDocs-style folder: front matter, markdown links and wikilinks, tool markup."""
    docs = root / "docs"
    (docs / "tutorial").mkdir(parents=True)
    (docs / "index.md").write_text(
        "# Project Falcon { #falcon }\n\nStart with the [tutorial](tutorial/first-steps.md) "
        "or the [[settings]] page.\n\n!!! tip\n    Read the [settings](settings.md#env) first.\n"
    )
    (docs / "settings.md").write_text(
        '---\ntitle: "Settings { #settings }"\n---\n/// note | Environment\n\nValues come from the '
        "environment; see [[index|the start]].\n\n///\n\n::: falcon.Settings\n"
    )
    (docs / "tutorial" / "first-steps.md").write_text(
        "# First Steps\n\nInstall it, then read [Settings](../settings.md).\n\n"
        "```mermaid\ngraph TD; A-->B;\n```\n\nNot a link: `[x](index.md)`. Gone: [old](old.md).\n"
    )
    return docs


def _links_of(graph_path: Path) -> set[tuple[str, str]]:
    from graphfuse.stores import SQLiteGraphStore

    graph = SQLiteGraphStore(str(graph_path))
    ids = ["index.md", "settings.md", "tutorial/first-steps.md"]
    return {(r.source, r.target) for r in run_sync(graph.relations(ids)) if r.type == LINKS_TO}


def test_a_docs_folder_read_by_the_directory_reader_builds_the_cli_graph(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from graphfuse.cli import app

    docs = _docs_folder(tmp_path)
    result = CliRunner().invoke(app, ["index", str(docs), "--store", str(tmp_path / "s"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    cli_links = _links_of(tmp_path / "s" / "graph.sqlite")
    assert cli_links == {
        ("index.md", "tutorial/first-steps.md"),
        ("index.md", "settings.md"),
        ("settings.md", "index.md"),
        ("tutorial/first-steps.md", "settings.md"),
    }

    documents = SimpleDirectoryReader(str(docs), recursive=True, filename_as_id=True).load_data()
    records = source_records(documents)
    by_path = {r.id: Path(r.metadata["file_path"]).relative_to(docs).as_posix() for r in records}
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=64)
    Indexer.for_records(records, graph, vectors, embedder).index(records)
    rels = run_sync(graph.relations(list(by_path)))
    assert {(by_path[r.source], by_path[r.target]) for r in rels if r.type == LINKS_TO} == cli_links

    titles = {by_path[r.id]: r.title for r in records}
    assert titles == {"index.md": "Project Falcon", "settings.md": "Settings", "tutorial/first-steps.md": "First Steps"}
    settings = next(r for r in records if by_path[r.id] == "settings.md")
    assert settings.text == "Environment\n\nValues come from the environment; see the start.\n"
    for record in records:
        for markup in ("{ #", "!!!", "///", ":::", "mermaid", ".md)", "[["):
            assert markup not in record.text.replace("`[x](index.md)`", ""), (record.id, markup)  # (code stays)
    raw = source_records(documents, raw_markdown=True)
    assert [r.text for r in raw] == [d.text.split("---\n", 2)[-1] for d in documents]


def _indexed(records: list[SourceRecord], **indexer: Any) -> GraphFuseRetriever:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=256)
    Indexer(graph, vectors, embedder, **indexer).index(records)
    return GraphFuseRetriever(presets.no_rerank(graph, vectors, embedder), similarity_top_k=5)


def test_a_readers_excluded_keys_survive_the_round_trip(tmp_path: Path) -> None:
    (tmp_path / "falcon.txt").write_text("Project Falcon rewrites routing for the northern grid.")
    docs = SimpleDirectoryReader(str(tmp_path), filename_as_id=True).load_data()
    reader_llm, reader_embed = docs[0].excluded_llm_metadata_keys, docs[0].excluded_embed_metadata_keys
    assert "file_name" in reader_llm
    assert "file_size" in reader_embed

    records = source_records(docs)
    assert records[0].metadata[EXCLUDED_KEYS] == {"llm": reader_llm, "embed": reader_embed}
    node = _indexed(records).retrieve("Project Falcon routing")[0].node
    assert node.metadata["file_name"] == "falcon.txt"  # still the user's metadata
    assert EXCLUDED_KEYS not in node.metadata
    # The reader's absolute file_path is bookkeeping too: kept in metadata, hidden from LLM and embedder.
    assert node.excluded_llm_metadata_keys == [*reader_llm, SIGNALS_KEY, CONTRIBUTIONS_KEY, "file_path"]
    assert node.excluded_embed_metadata_keys == [*reader_embed, SIGNALS_KEY, CONTRIBUTIONS_KEY, "file_path"]
    assert node.metadata["file_path"].endswith("falcon.txt")
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        shown = node.get_content(mode)
        assert "Project Falcon" in shown
        assert "file_path:" not in shown
        assert "file_name:" not in shown
        assert "file_size:" not in shown
        assert SIGNALS_KEY not in shown


def test_a_documents_own_excluded_keys_survive_in_every_chunk() -> None:
    doc = LIDocument(
        text=" ".join(f"Sentence {i} about the Falcon routing project." for i in range(60)),
        id_="falcon",
        metadata={"team": "routing", "secret": "s3cr3t-code", "title": "Falcon"},
        excluded_llm_metadata_keys=["secret"],
        excluded_embed_metadata_keys=["secret", "team"],
    )
    nodes = _indexed(source_records([doc]), chunker=TokenChunker(max_tokens=64)).retrieve("Falcon routing")
    chunks = [n.node for n in nodes if n.node.node_id.startswith("falcon#")]
    assert chunks  # the document was split, and each chunk keeps its excluded keys
    for node in chunks:
        ours = [SIGNALS_KEY, CONTRIBUTIONS_KEY, "parent_id", "chunk_index"]  # the indexer's bookkeeping, hidden
        assert node.excluded_llm_metadata_keys == ["secret", *ours]
        assert node.excluded_embed_metadata_keys == ["secret", "team", *ours]
        llm, embed = node.get_content(MetadataMode.LLM), node.get_content(MetadataMode.EMBED)
        assert "parent_id" not in llm
        assert "chunk_index" not in embed
        assert "team: routing" in llm
        assert "s3cr3t-code" not in llm
        assert "team: routing" not in embed
        assert "s3cr3t-code" not in embed


def test_excluded_keys_of_another_shape_are_refused() -> None:
    with pytest.raises(InvalidInput, match="'graphfuse_excluded_keys'\\['llm'\\] must be a list of metadata keys"):
        SourceRecord("a", "text", metadata={EXCLUDED_KEYS: {"llm": "secret"}})
    with pytest.raises(InvalidInput, match="record 'a': 'graphfuse_excluded_keys' must be a mapping"):
        SourceRecord("a", "text", metadata={EXCLUDED_KEYS: ["secret"]})
    assert excluded_keys({EXCLUDED_KEYS: {"llm": ["a", "a"]}}) == (("a",), ())
    assert excluded_keys({}) == ((), ())
