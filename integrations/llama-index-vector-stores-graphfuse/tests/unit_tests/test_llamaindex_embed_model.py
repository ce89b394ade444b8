"""GraphFuseVectorStore(embed_model=...): the store embeds its passages with the user's model, title
and passage, cut as `graphfuse index` cuts the files, so it holds what the CLI would store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.retrievers.graphfuse import GraphFuseEmbedding
from llama_index.vector_stores.graphfuse import GraphFuseVectorStore
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import KIND_KEY
from graphfuse.stores import aopen_store

# A page of about 900 tokens with a markdown link: `graphfuse index` cuts it into passages and
# reads the link as its text.
LONG = "# Edge Proxy\n\n" + "\n\n".join(
    f"The Edge Proxy retries request kind {i} twice, then reads timeout {i} from the "
    f"[Routing Table](routing.md) before failing over to region {i}."
    for i in range(45)
)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def _spaced(text: str) -> str:
    # A node parser strips the whitespace at a node's ends: the texts compare up to whitespace.
    return " ".join(text.split())


async def _passages(store_dir: Path) -> dict[str, tuple[list[float], dict, str]]:
    """Each stored passage (a page's chunk, or a page of one passage): its vector, metadata and
    text, by its text up to whitespace."""
    store = await aopen_store(store_dir, mode="ro")
    try:
        docs = [
            d
            async for d in store.graph.iter_documents()
            if d.metadata.get(KIND_KEY) == "chunk" or (d.metadata.get(KIND_KEY) == "document" and d.content)
        ]
        chunked = {d.metadata.get("parent_id") for d in docs}
        units = [d for d in docs if d.id not in chunked]
        vectors = await store.vectors.get_vectors([d.id for d in units])
        return {_spaced(d.content or ""): (list(vectors[d.id]), dict(d.metadata), d.content or "") for d in units}
    finally:
        await store.aclose()


def _front_door(folder: Path, store: GraphFuseVectorStore, embed_model: GraphFuseEmbedding, size: int) -> None:
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    index = VectorStoreIndex.from_documents(
        docs[:-1],
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=embed_model,
        transformations=[SentenceSplitter(chunk_size=size, chunk_overlap=16)],
    )
    index.insert(docs[-1])  # a later write: the pages written before keep their passages and vectors


async def test_the_store_holds_the_passages_and_vectors_graphfuse_index_makes(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path
) -> None:
    (folder / "proxy.md").write_text(LONG, encoding="utf-8")
    cli = CliRunner().invoke(app, ["index", str(folder), "--store", str(tmp_path / "cli"), "--embedder", "hashing"])
    assert cli.exit_code == 0, cli.output
    store = GraphFuseVectorStore(tmp_path / "li", embedder="hashing", embed_model=embed_model)
    _front_door(folder, store, embed_model, 800)  # nodes longer than the passages
    store.close()

    want, got = await _passages(tmp_path / "cli"), await _passages(tmp_path / "li")
    assert sum(t.count("request kind") for t in want) > 45  # the long page is several passages
    assert sorted(got) == sorted(want)  # the same passages: no markup, the nodes' overlaps once
    alike = [t for t, (_, _, raw) in want.items() if got[t][2] == raw]  # (a node's text is stripped)
    assert sum(t.count("request kind") for t in alike) > 45
    for text in alike:
        assert got[text][0] == pytest.approx(want[text][0], abs=1e-6)  # embedded with the page's title

    # Without embed_model, the passages are the nodes' and their vectors LlamaIndex's.
    plain = GraphFuseVectorStore(tmp_path / "plain", embedder="hashing")
    _front_door(folder, plain, embed_model, 800)
    plain.close()
    assert sorted(await _passages(tmp_path / "plain")) != sorted(want)


async def test_each_passage_holds_the_node_it_comes_from(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path
) -> None:
    (folder / "proxy.md").write_text(LONG, encoding="utf-8")
    store = GraphFuseVectorStore(tmp_path / "li", embedder="hashing", embed_model=embed_model)
    _front_door(folder, store, embed_model, 800)
    nodes = {n.node_id: n for n in store.get_nodes()}
    store.close()
    passages = await _passages(tmp_path / "li")
    held = [(text, json.loads(meta["_node_content"])["id_"]) for text, (_, meta, _) in passages.items()]
    assert len({node for _, node in held}) > 2
    checked = 0
    for text, node_id in held:  # a node holding the passage's sentences (told by their numbers)
        numbers = [w for w in _words(text) if w.isdigit()]
        if not numbers:
            continue  # (a page of one passage is its node)
        checked += 1
        share = {i: sum(w in _words(n.get_content()) for w in numbers) / len(numbers) for i, n in nodes.items()}
        assert share[node_id] >= 0.5  # (a passage may straddle two nodes)
    assert checked > 3

    index = VectorStoreIndex.from_vector_store(GraphFuseVectorStore(tmp_path / "li"), embed_model=embed_model)
    found = index.as_retriever(similarity_top_k=3).retrieve("timeout 40 region 40")
    assert any("timeout 40" in n.node.get_content() for n in found)


@pytest.mark.parametrize("size", [48, 400])
def test_every_node_is_kept_whatever_its_size(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path, size: int
) -> None:
    (folder / "proxy.md").write_text(LONG, encoding="utf-8")
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    nodes = SentenceSplitter(chunk_size=size, chunk_overlap=16).get_nodes_from_documents(docs)
    for node in nodes:
        node.embedding = embed_model.get_text_embedding(node.get_content())
    store = GraphFuseVectorStore(tmp_path / "li", embed_model=embed_model)
    store.add(nodes[: len(nodes) // 2])
    store.add(nodes[len(nodes) // 2 :])
    # Nodes shorter than the passages are more than the passages can hold: the page keeps its nodes' own.
    assert sorted(n.node_id for n in store.get_nodes()) == sorted(n.node_id for n in nodes)
    store.close()
    again = GraphFuseVectorStore(tmp_path / "li", embed_model=embed_model)
    assert len(again.get_nodes()) == len(nodes)
    again.close()


def test_an_embed_model_of_another_size_is_refused_before_anything_is_written(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path
) -> None:
    other = GraphFuseEmbedding(HashingEmbedder(dimension=64))
    store = GraphFuseVectorStore(tmp_path / "li", embed_model=other)
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    with pytest.raises(InvalidInput, match="makes 64-d vectors but the nodes' embeddings are 384-d"):
        VectorStoreIndex.from_documents(
            docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed_model
        )
    assert store.get_nodes() == []
    store.close()
    with pytest.raises(InvalidInput, match="embed_model must be a LlamaIndex embedding"):
        GraphFuseVectorStore(embed_model=HashingEmbedder())  # type: ignore[arg-type]
