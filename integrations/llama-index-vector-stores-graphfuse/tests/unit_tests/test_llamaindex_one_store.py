"""One store, every door: a store `graphfuse index` built opens in LlamaIndex, and a store written
through LlamaIndex opens in the CLI (or is refused clearly when the CLI cannot embed alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.schema import MetadataMode
from llama_index.retrievers.graphfuse import GraphFuseEmbedding
from llama_index.vector_stores.graphfuse import HOST_EMBEDDER, GraphFuseVectorStore
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder

QUESTION = "Who owns the table the Edge Proxy reads its timeouts from?"
runner = CliRunner()


def _cli_results(store: Path, question: str, top_k: int) -> list[dict[str, str]]:
    result = runner.invoke(app, ["query", question, "--store", str(store), "--top-k", str(top_k), "--json"])
    assert result.exit_code == 0, result.output
    return list(json.loads(result.output))


def _cli_ids(store: Path, question: str, top_k: int) -> list[str]:
    return [r["id"] for r in _cli_results(store, question, top_k)]


def _cli_pages(store: Path, question: str, top_k: int) -> list[str]:
    return [r.get("parent_id") or r["id"] for r in _cli_results(store, question, top_k)]


def test_a_store_the_cli_built_opens_in_llamaindex(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path
) -> None:
    store_dir = tmp_path / "cli-store"
    done = runner.invoke(app, ["index", str(folder), "--store", str(store_dir), "--embedder", "hashing"])
    assert done.exit_code == 0, done.output

    store = GraphFuseVectorStore.from_path(store_dir)
    index = VectorStoreIndex.from_vector_store(store, embed_model=embed_model)
    nodes = index.as_retriever(similarity_top_k=3).retrieve(QUESTION)
    assert [n.node.node_id for n in nodes] == _cli_ids(store_dir, QUESTION, 3)
    for n in nodes:  # GraphFuse's own documents: bookkeeping kept, but not shown to the LLM
        assert "file_path" not in n.node.get_content(MetadataMode.LLM)
        assert "graphfuse_signals" not in n.node.get_content(MetadataMode.LLM)
    store.close()

    other = VectorStoreIndex.from_vector_store(
        GraphFuseVectorStore.from_path(store_dir), embed_model=GraphFuseEmbedding(HashingEmbedder(dimension=256))
    )
    with pytest.raises(InvalidInput, match=r"256 dimensions but the store .* holds 384-d vectors"):
        other.as_retriever().retrieve(QUESTION)


def test_a_store_written_through_llamaindex_opens_in_the_cli(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path
) -> None:
    store_dir = tmp_path / "li-store"
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    store = GraphFuseVectorStore(store_dir, embedder="hashing")  # the registered twin of embed_model
    index = VectorStoreIndex.from_documents(
        docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed_model
    )
    found = index.as_retriever(similarity_top_k=3).retrieve(QUESTION)
    mine = [n.node.node_id for n in found]
    store.close()
    # Each source document is a page of the store (its id the document's), its nodes the page's passages.
    assert _cli_pages(store_dir, QUESTION, 3) == [n.node.ref_doc_id for n in found]
    manifest = json.loads((store_dir / "manifest.json").read_text())
    assert manifest["components"]["embedder"] == "hashing"
    assert manifest["dimension"] == 384

    again = VectorStoreIndex.from_vector_store(GraphFuseVectorStore.from_path(store_dir), embed_model=embed_model)
    assert [n.node.node_id for n in again.as_retriever(similarity_top_k=3).retrieve(QUESTION)] == mine


def test_a_store_of_an_embed_model_the_cli_cannot_build_is_refused_clearly(
    folder: Path, embed_model: GraphFuseEmbedding, tmp_path: Path
) -> None:
    store_dir = tmp_path / "li-own-model"
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    store = GraphFuseVectorStore(store_dir)
    index = VectorStoreIndex.from_documents(
        docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed_model
    )
    mine = [n.node.node_id for n in index.as_retriever(similarity_top_k=3).retrieve(QUESTION)]
    store.close()
    manifest = json.loads((store_dir / "manifest.json").read_text())
    assert manifest["components"]["embedder"] == HOST_EMBEDDER
    assert manifest["dimension"] == 384
    result = runner.invoke(app, ["query", QUESTION, "--store", str(store_dir)])
    assert result.exit_code != 0
    # The manifest names the embedder as one given in Python, which no registered name rebuilds.
    assert "(given)" in result.output or "llama-index embed_model" in result.output

    # LlamaIndex reopens it (the vectors are its embed_model's), and refuses another embedder name.
    again = VectorStoreIndex.from_vector_store(GraphFuseVectorStore(store_dir), embed_model=embed_model)
    assert [n.node.node_id for n in again.as_retriever(similarity_top_k=3).retrieve(QUESTION)] == mine
    with pytest.raises(InvalidInput, match="vectors of a LlamaIndex embed_model"):
        GraphFuseVectorStore(store_dir, embedder="hashing").get_nodes()
