"""GraphFuseVectorStore behind LlamaIndex's own VectorStoreIndex: retrieval through the preset,
the graph built from the nodes, writes, filters and the async forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)
from llama_index.retrievers.graphfuse import GraphFuseEmbedding
from llama_index.vector_stores.graphfuse import GraphFuseVectorStore

from graphfuse import InvalidInput, NotFound, presets
from graphfuse.embedders import HashingEmbedder

QUESTION = "How often does a deployed request get retried?"


def _index(folder: Path, embed_model: GraphFuseEmbedding, store: GraphFuseVectorStore) -> VectorStoreIndex:
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    return VectorStoreIndex.from_documents(
        docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed_model
    )


def _names(nodes: list) -> list[str]:
    return [Path(n.node.metadata["file_path"]).name for n in nodes]


@pytest.mark.parametrize("where", ["memory", "directory"])
def test_from_documents_then_retrieve_through_the_multihop_preset(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path, where: str
) -> None:
    store = GraphFuseVectorStore(None if where == "memory" else tmp_path / "store")
    index = _index(folder, embed_model, store)
    nodes = index.as_retriever(similarity_top_k=5).retrieve(QUESTION)
    assert 1 <= len(nodes) <= 5
    assert "proxy.md" in _names(nodes)[:2]
    signals = nodes[0].node.metadata["graphfuse_signals"]
    assert {"semantic", "ppr"} <= set(signals)  # the vectors and the graph walk, not plain cosine
    # The node comes back as it was added (its text, its reader metadata, its source document).
    assert nodes[0].node.ref_doc_id is not None
    assert nodes[0].node.ref_doc_id.endswith(".md")
    assert "graphfuse_signals" not in nodes[0].node.get_content(MetadataMode.LLM)
    store.close()


async def test_the_store_answers_as_the_preset_does_on_the_same_components(
    folder: Path, embed_model: GraphFuseEmbedding
) -> None:
    store = GraphFuseVectorStore()
    index = _index(folder, embed_model, store)
    got = await index.as_retriever(similarity_top_k=4).aretrieve(QUESTION)
    pipeline = await presets.amultihop(store.client, store._backend.vectors, HashingEmbedder())  # type: ignore[union-attr]
    want = await pipeline.aretrieve(QUESTION, 4)
    # Each file is a page (its id the source document's), each result the node stored in its passage.
    assert [n.node.ref_doc_id for n in got] == [r.document_id for r in want]
    assert [n.node.node_id for n in got] == [json.loads(r.document.metadata["_node_content"])["id_"] for r in want]
    assert [n.score for n in got] == pytest.approx([r.score for r in want])


async def test_the_graph_and_results_do_not_depend_on_the_batches(
    folder: Path, embed_model: GraphFuseEmbedding
) -> None:
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    nodes = []
    for doc in docs:
        node = TextNode(text=doc.text, id_=doc.doc_id + "-n", metadata=dict(doc.metadata))
        node.excluded_llm_metadata_keys = list(doc.excluded_llm_metadata_keys)
        node.embedding = await embed_model.aget_text_embedding(doc.text)
        nodes.append(node)
    one, many = GraphFuseVectorStore(), GraphFuseVectorStore()
    await one.async_add(nodes)
    for i in range(0, len(nodes), 2):  # three batches, the linked-to page after the page linking it
        await many.async_add(list(reversed(nodes))[i : i + 2])

    async def relations(store: GraphFuseVectorStore) -> list[tuple[str, str, str, float]]:
        ids = [n.node_id for n in nodes]
        rels = await store.client.relations(ids)
        return sorted({(r.source, r.target, r.type, r.weight) for r in rels})

    assert await relations(one) == await relations(many)
    assert any(r[2] == "MENTIONS" for r in await relations(one))
    assert any(r[2] == "LINKS_TO" for r in await relations(one))
    query = VectorStoreQuery(
        query_str=QUESTION, query_embedding=await embed_model.aget_query_embedding(QUESTION), similarity_top_k=5
    )
    a, b = await one.aquery(query), await many.aquery(query)
    assert a.ids == b.ids
    assert a.similarities == pytest.approx(b.similarities)


def test_delete_get_nodes_and_clear(folder: Path, embed_model: GraphFuseEmbedding) -> None:
    store = GraphFuseVectorStore()
    index = _index(folder, embed_model, store)
    every = store.get_nodes()
    assert len(every) == 5
    assert all(n.get_content() for n in every)
    billing = next(n for n in every if n.metadata["file_name"] == "billing.md")
    assert [n.node_id for n in store.get_nodes([billing.node_id])] == [billing.node_id]

    index.delete_ref_doc(billing.ref_doc_id)  # LlamaIndex calls store.delete(ref_doc_id)
    assert billing.node_id not in {n.node_id for n in store.get_nodes()}
    assert "billing.md" not in _names(index.as_retriever(similarity_top_k=5).retrieve("invoices first working day"))

    oncall = MetadataFilters(filters=[MetadataFilter(key="file_name", value="oncall.md")])
    assert [n.metadata["file_name"] for n in store.get_nodes(filters=oncall)] == ["oncall.md"]
    store.delete_nodes(filters=oncall)
    assert len(store.get_nodes()) == 3
    store.delete_nodes([store.get_nodes()[0].node_id])
    assert len(store.get_nodes()) == 2

    store.clear()
    assert store.get_nodes() == []
    assert index.as_retriever().retrieve(QUESTION) == []


async def test_async_twins(folder: Path, embed_model: GraphFuseEmbedding) -> None:
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    store = GraphFuseVectorStore()
    index = VectorStoreIndex.from_documents(
        docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed_model, use_async=True
    )
    assert len(await store.aget_nodes()) == 5
    nodes = await index.as_retriever(similarity_top_k=3).aretrieve(QUESTION)
    assert "proxy.md" in _names(nodes)
    await index.adelete_ref_doc(nodes[0].node.ref_doc_id)
    await store.adelete_nodes(filters=MetadataFilters(filters=[MetadataFilter(key="file_name", value="billing.md")]))
    assert len(await store.aget_nodes()) == 3
    await store.aclear()
    assert await store.aget_nodes() == []


def test_metadata_filters_apply_and_unsupported_ones_are_refused(folder: Path, embed_model: GraphFuseEmbedding) -> None:
    store = GraphFuseVectorStore()
    index = _index(folder, embed_model, store)
    only = MetadataFilters(filters=[MetadataFilter(key="file_name", value=["routing.md", "oncall.md"], operator="in")])
    nodes = index.as_retriever(similarity_top_k=5, filters=only).retrieve("Who owns the Routing Table?")
    assert set(_names(nodes)) <= {"routing.md", "oncall.md"}
    assert nodes
    either = MetadataFilters(
        filters=[MetadataFilter(key="file_name", value="a.md"), MetadataFilter(key="file_name", value="b.md")],
        condition=FilterCondition.OR,
    )
    with pytest.raises(InvalidInput, match="'or' is not supported"):
        index.as_retriever(filters=either).retrieve("Routing")
    text = MetadataFilters(filters=[MetadataFilter(key="file_name", value="rout", operator=FilterOperator.TEXT_MATCH)])
    with pytest.raises(InvalidInput, match="'text_match' is not supported"):
        index.as_retriever(filters=text).retrieve("Routing")


def test_bad_input_is_refused_before_anything_is_written(folder: Path, embed_model: GraphFuseEmbedding) -> None:
    store = GraphFuseVectorStore()
    _index(folder, embed_model, store)
    with pytest.raises(InvalidInput, match="has no embedding"):
        store.add([TextNode(text="no vector", id_="x")])
    wrong = TextNode(text="a vector of another model", id_="y", embedding=[0.5] * 8)
    with pytest.raises(InvalidInput, match="8 dimensions but the store in memory holds 384-d"):
        store.add([wrong])
    assert len(store.get_nodes()) == 5
    with pytest.raises(InvalidInput, match="query text"):
        store.query(VectorStoreQuery(query_embedding=[0.1] * 384, similarity_top_k=2))
    with pytest.raises(InvalidInput, match="8 dimensions"):
        store.query(VectorStoreQuery(query_str="q", query_embedding=[0.1] * 8, similarity_top_k=2))
    with pytest.raises(InvalidInput, match="no-such-preset"):
        GraphFuseVectorStore(preset="no-such-preset")
    with pytest.raises(NotFound):
        GraphFuseVectorStore.from_path(folder / "missing")


def test_an_empty_store_returns_nothing(embed_model: GraphFuseEmbedding) -> None:
    store = GraphFuseVectorStore()
    index = VectorStoreIndex.from_vector_store(store, embed_model=embed_model)
    assert index.as_retriever().retrieve("anything") == []


@pytest.mark.parametrize("cap", [1, None])
def test_nodes_of_one_document_are_capped_as_graphfuse_passages_are(
    folder: Path, embed_model: GraphFuseEmbedding, cap: int | None
) -> None:
    from llama_index.core.node_parser import SentenceSplitter

    (folder / "proxy.md").write_text(
        "# Edge Proxy\n\n" + " ".join(f"The Edge Proxy retries request kind {i} twice." for i in range(40)),
        encoding="utf-8",
    )
    # Pages as long as it, so that it holds no more of the store than a page of a real folder
    # (not a hub page, whose passages the preset ranks lower: docs/stages.md).
    for topic in ("Billing", "Search", "Mail", "Audit"):
        text = " ".join(f"The {topic} service stores record {i} nightly." for i in range(40))
        (folder / f"{topic.lower()}.md").write_text(f"# {topic}\n\n{text}", encoding="utf-8")
    # Metadata without the temporary folder's path: the embedded texts, and so the ranking, are
    # the same at every run.
    docs = SimpleDirectoryReader(
        str(folder), filename_as_id=True, file_metadata=lambda path: {"file_name": Path(path).name}
    ).load_data()
    store = GraphFuseVectorStore(max_per_document=cap)
    index = VectorStoreIndex.from_documents(
        docs,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=embed_model,
        transformations=[SentenceSplitter(chunk_size=64, chunk_overlap=0)],
    )
    assert len(store.get_nodes()) > 6  # the proxy page is several nodes
    sources = [n.node.ref_doc_id for n in index.as_retriever(similarity_top_k=4).retrieve("Edge Proxy retries")]
    assert len(sources) == 4
    if cap == 1:
        assert len(set(sources)) == 4  # four documents named
    else:
        assert max(sources.count(s) for s in sources) > 1  # a document gives several of its nodes
    with pytest.raises(InvalidInput, match="max_per_document"):
        GraphFuseVectorStore(max_per_document=0)


async def test_a_document_inserted_later_is_linked_from_the_pages_that_name_it(
    folder: Path, embed_model: GraphFuseEmbedding
) -> None:
    from llama_index.core import Document

    store = GraphFuseVectorStore()
    index = _index(folder, embed_model, store)  # oncall.md and routing.md name "Maria Lund"

    def pages() -> list[str]:  # each source document is a page of the store, its id the document's
        return sorted({n.ref_doc_id or n.node_id for n in store.get_nodes()})

    before = {(r.source, r.target, r.type) for r in await store.client.relations(pages())}
    index.insert(Document(text="Maria Lund leads the platform team.", metadata={"title": "Maria Lund"}, id_="maria"))
    assert "maria" in pages()
    named = {r.source for r in await store.client.relations(["maria"]) if r.type == "MENTIONS" and r.target == "maria"}
    mentioning = await store.client.get_documents(sorted(named))
    files = {d.metadata.get("file_name") for d in mentioning.values()}
    assert files == {"oncall.md", "routing.md"}  # pages indexed before it, linked now
    assert before < {(r.source, r.target, r.type) for r in await store.client.relations(pages())}


def test_a_file_the_reader_loaded_that_is_not_text_is_skipped_with_one_warning(
    folder: Path, embed_model: GraphFuseEmbedding, caplog: pytest.LogCaptureFixture
) -> None:
    # SimpleDirectoryReader (without llama-index-readers-file) reads an image's bytes as text.
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    store = GraphFuseVectorStore()
    with caplog.at_level("WARNING", logger="graphfuse.indexing"):
        _index(folder, embed_model, store)
    assert "logo.png" not in {n.metadata["file_name"] for n in store.get_nodes()}
    warnings = [r.getMessage() for r in caplog.records if r.name == "graphfuse.indexing"]
    assert len(warnings) == 1
    assert "logo.png" in warnings[0]
