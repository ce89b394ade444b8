"""A source document of several nodes is one GraphFuse page with its nodes as the page's chunks, as
`graphfuse index` makes of a file: the preset folds passages into pages, and the nodes come back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import BaseNode, TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery
from llama_index.retrievers.graphfuse import GraphFuseEmbedding
from llama_index.vector_stores.graphfuse import GraphFuseVectorStore

from graphfuse import Document
from graphfuse.indexing import KIND_KEY, PART_OF

QUESTION = "How often does the Edge Proxy retry a request?"
LONG = "# Edge Proxy\n\n" + " ".join(
    f"The Edge Proxy retries request kind {i} twice and reads its timeouts from the Routing Table." for i in range(24)
)


async def _nodes(folder: Path, embed_model: GraphFuseEmbedding) -> list[BaseNode]:
    (folder / "proxy.md").write_text(LONG, encoding="utf-8")
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    nodes = SentenceSplitter(chunk_size=64, chunk_overlap=8).get_nodes_from_documents(docs)
    for node in nodes:
        node.embedding = await embed_model.aget_text_embedding(node.get_content())
    return nodes


async def _graph(store: GraphFuseVectorStore) -> tuple[dict[str, str], list[tuple[str, str, str, float]]]:
    docs = {d.id: d.metadata.get(KIND_KEY) async for d in store.client.iter_documents()}
    rels = await store.client.relations(sorted(docs))
    return docs, sorted({(r.source, r.target, r.type, r.weight) for r in rels})


async def test_a_document_of_several_nodes_is_one_page_with_its_nodes_as_chunks(
    folder: Path, embed_model: GraphFuseEmbedding
) -> None:
    nodes = await _nodes(folder, embed_model)
    proxy = [n for n in nodes if n.metadata["file_name"] == "proxy.md"]
    assert len(proxy) > 3
    store = GraphFuseVectorStore()
    await store.async_add(nodes)

    page_id = proxy[0].ref_doc_id
    assert page_id is not None
    kinds, rels = await _graph(store)
    assert kinds[page_id] == "document"
    chunks = sorted(s for s, t, k, _ in rels if k == PART_OF and t == page_id)
    assert len(chunks) == len(proxy)
    assert all(kinds[c] == "chunk" for c in chunks)
    page = (await store.client.get_documents([page_id]))[page_id]
    assert page.metadata["title"] == "Edge Proxy"  # the page's own heading, as graphfuse index reads it
    assert page.content is not None
    assert page.content.count("request kind 23 twice") == 1  # the nodes' overlaps once
    # The deploy page's link to proxy.md reaches the page, not one of its nodes.
    deploy = next(n.ref_doc_id for n in nodes if n.metadata["file_name"] == "deploy.md")
    assert (deploy, page_id, "LINKS_TO", 1.0) in rels

    # LlamaIndex gets its own nodes back, by their ids.
    assert {n.node_id for n in await store.aget_nodes()} == {n.node_id for n in nodes}
    wanted = [proxy[2].node_id, proxy[0].node_id]
    assert [n.node_id for n in await store.aget_nodes(wanted)] == wanted
    query = VectorStoreQuery(
        query_str=QUESTION, query_embedding=await embed_model.aget_query_embedding(QUESTION), similarity_top_k=3
    )
    found = await store.aquery(query)
    assert found.ids
    assert set(found.ids) <= {n.node_id for n in nodes}
    # Restricted to the page (doc_ids, on the page and its chunks alike): the page's nodes.
    query.doc_ids = [page_id]
    query.similarity_top_k = 2
    store.max_per_document = None
    found = await store.aquery(query)
    assert found.ids
    assert len(found.ids) == 2
    assert set(found.ids) <= {n.node_id for n in proxy}


async def test_pages_do_not_depend_on_the_batches(folder: Path, embed_model: GraphFuseEmbedding) -> None:
    nodes = await _nodes(folder, embed_model)
    one, many = GraphFuseVectorStore(), GraphFuseVectorStore()
    await one.async_add(nodes)
    backwards = list(reversed(nodes))
    for i in range(0, len(backwards), 3):  # a page's nodes split over batches, in reverse order
        await many.async_add(backwards[i : i + 3])
    assert await _graph(one) == await _graph(many)
    query = VectorStoreQuery(
        query_str=QUESTION, query_embedding=await embed_model.aget_query_embedding(QUESTION), similarity_top_k=4
    )
    a, b = await one.aquery(query), await many.aquery(query)
    assert a.ids == b.ids
    assert a.similarities == pytest.approx(b.similarities)


async def test_deleting_nodes_of_a_page_keeps_its_other_nodes(folder: Path, embed_model: GraphFuseEmbedding) -> None:
    nodes = await _nodes(folder, embed_model)
    proxy = [n for n in nodes if n.metadata["file_name"] == "proxy.md"]
    page_id = proxy[0].ref_doc_id
    assert page_id is not None
    store = GraphFuseVectorStore()
    await store.async_add(nodes)
    alone = GraphFuseVectorStore()
    await alone.async_add([n for n in nodes if n.node_id != proxy[1].node_id])

    await store.adelete_nodes([proxy[1].node_id])
    left = {n.node_id for n in await store.aget_nodes()}
    assert left == {n.node_id for n in nodes} - {proxy[1].node_id}
    assert await _graph(store) == await _graph(alone)  # as if the node had never been added

    await store.adelete(page_id)
    assert not {n.node_id for n in proxy} & {n.node_id for n in await store.aget_nodes()}
    kinds, _ = await _graph(store)
    assert page_id not in kinds
    assert not any(k.startswith(page_id + "#") for k in kinds)


async def test_a_long_node_is_searched_by_passages_and_comes_back_once(
    folder: Path, embed_model: GraphFuseEmbedding
) -> None:
    # One node of about 600 tokens: its passages are graphfuse index's (256 tokens), each holding it.
    node = TextNode(text=LONG, id_="proxy-whole", metadata={"file_path": str(folder / "proxy.md")})
    node.embedding = await embed_model.aget_text_embedding(LONG)
    store = GraphFuseVectorStore(max_per_document=None)
    await store.async_add([node])
    kinds, rels = await _graph(store)
    chunks = [i for i, kind in kinds.items() if kind == "chunk"]
    assert len(chunks) > 1
    assert sum(1 for r in rels if r[2] == PART_OF) == len(chunks)
    assert [n.node_id for n in await store.aget_nodes()] == ["proxy-whole"]
    query = VectorStoreQuery(
        query_str=QUESTION, query_embedding=await embed_model.aget_query_embedding(QUESTION), similarity_top_k=3
    )
    assert (await store.aquery(query)).ids == ["proxy-whole"]  # the node once, not once per passage


async def test_a_write_reads_and_writes_only_what_it_brings(folder: Path, embed_model: GraphFuseEmbedding) -> None:
    nodes = await _nodes(folder, embed_model)
    store = GraphFuseVectorStore()
    await store.async_add(nodes)
    written: list[str] = []
    graph = store.client
    store_documents = graph.store_documents

    async def spy(documents: Sequence[Document]) -> None:
        written.extend(d.id for d in documents)
        await store_documents(documents)

    graph.store_documents = spy  # the real store, its writes counted
    extra = TextNode(text="Invoices name no other page.", id_="extra", metadata={"file_path": str(folder / "x.md")})
    extra.embedding = await embed_model.aget_text_embedding(extra.text)
    await store.async_add([extra])
    assert set(written) == {extra.ref_doc_id or "extra"}  # no other page written again
    one = GraphFuseVectorStore()
    await one.async_add([*nodes, extra])
    assert await _graph(store) == await _graph(one)


async def test_a_write_sees_what_another_store_object_wrote(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path
) -> None:
    nodes = await _nodes(folder, embed_model)
    first, second = GraphFuseVectorStore(tmp_path / "s"), GraphFuseVectorStore(tmp_path / "s")
    third = len(nodes) // 3
    await first.async_add(nodes[:third])
    await second.async_add(nodes[third : 2 * third])  # the store changed under `first`
    await first.async_add(nodes[2 * third :])
    one = GraphFuseVectorStore()
    await one.async_add(nodes)
    assert await _graph(first) == await _graph(one)
    assert {n.node_id for n in await first.aget_nodes()} == {n.node_id for n in nodes}
    await first.aclose()
    await second.aclose()
