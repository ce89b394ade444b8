"""One store, every door: a CLI store opens in LangChain, a LangChain store opens in the CLI, serve and eval."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_graphfuse import GraphFuseEmbeddings, GraphFuseVectorStore
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import GIVEN_EMBEDDER, open_store

PAGES = {
    "deploy.md": "# Deploying\n\nRun the service behind the [Edge Proxy](proxy.md).\n",
    "proxy.md": "# Edge Proxy\n\nThe Edge Proxy retries every failed request twice.\n",
    "maps.md": "# Atlas Maps\n\nAtlas Maps serves the map tiles; deployments use it too.\n",
}
QUESTION = "How often does a deployed request get retried?"
runner = CliRunner()


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _loaded(folder: Path) -> list[Document]:
    # What DirectoryLoader(folder, loader_cls=TextLoader) gives: one document per file, its path as source.
    return [
        Document(page_content=(folder / n).read_text(encoding="utf-8"), metadata={"source": str(folder / n)})
        for n in sorted(PAGES)
    ]


def _query_ids(store: Path, question: str) -> list[str]:
    done = runner.invoke(app, ["query", question, "--store", str(store), "--json", "--top-k", "3"])
    assert done.exit_code == 0, done.output
    return [row["id"] for row in json.loads(done.stdout)]


def test_a_cli_store_opens_in_langchain_with_its_own_embedder(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    done = runner.invoke(app, ["index", str(_folder(tmp_path)), "--store", str(store_dir), "--embedder", "hashing"])
    assert done.exit_code == 0, done.output
    with GraphFuseVectorStore.from_path(store_dir) as store:
        assert store.preset == "multihop"
        assert isinstance(store.embeddings, GraphFuseEmbeddings)
        got = [d.id for d in store.as_retriever(search_kwargs={"k": 3}).invoke(QUESTION)]
    assert got == _query_ids(store_dir, QUESTION)  # the same preset, the same store: the same answer

    # Writing through LangChain keeps the CLI's documents (read back, skipped as unchanged) and links.
    with GraphFuseVectorStore.from_path(store_dir) as store:
        store.add_documents([Document(id="faq.md", page_content="The Edge Proxy is documented in proxy.md.")])
        assert {d.id for d in store.get_by_ids(["deploy.md", "proxy.md", "maps.md", "faq.md"])} == {
            "deploy.md",
            "proxy.md",
            "maps.md",
            "faq.md",
        }
    assert "faq.md" in _query_ids(store_dir, "Where is the Edge Proxy documented?")


def test_a_given_embedding_must_be_the_stores(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    done = runner.invoke(app, ["index", str(_folder(tmp_path)), "--store", str(store_dir), "--embedder", "hashing"])
    assert done.exit_code == 0, done.output
    with GraphFuseVectorStore.from_path(store_dir, GraphFuseEmbeddings(HashingEmbedder())) as store:
        assert store.similarity_search(QUESTION, k=1)
    with pytest.raises(InvalidInput, match="was built with embedder"):
        GraphFuseVectorStore.from_path(store_dir, GraphFuseEmbeddings(HashingEmbedder(dimension=64)))
    with pytest.raises(InvalidInput, match="was built with embedder"):
        GraphFuseVectorStore.from_path(store_dir, DeterministicFakeEmbedding(size=384))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _serve_ids(store_dir: Path, question: str) -> list[str]:
    port = _free_port()
    env = {**os.environ, "GRAPHFUSE_LOAD_PLUGINS": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphfuse.cli", "serve", "--store", str(store_dir), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise AssertionError(f"server exited: {proc.stdout.read() if proc.stdout else ''}")
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        r = httpx.post(f"{base}/v1/retrieve", json={"query": question, "top_k": 3}, timeout=60)
        assert r.status_code == 200, r.text
        return [row["id"] for row in r.json()["results"]]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_langchain_store_opens_in_query_serve_and_eval(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    folder = _folder(tmp_path)
    # The GraphFuse embedder the CLI can rebuild by name ("hashing", its default build).
    with GraphFuseVectorStore.from_documents(
        _loaded(folder), GraphFuseEmbeddings(HashingEmbedder()), path=store_dir
    ) as store:
        ours = [d.id for d in store.similarity_search(QUESTION, k=3)]
    manifest = open_store(store_dir, mode="ro").manifest
    assert manifest["components"]["embedder"] == "hashing"
    assert _query_ids(store_dir, QUESTION) == ours
    assert _serve_ids(store_dir, QUESTION) == ours

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "extra", "title": "Extra", "text": "Extra notes on the Edge Proxy."}) + "\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"id": "q1", "question": "Edge Proxy notes", "gold_ids": ["extra"]}) + "\n")
    done = runner.invoke(
        app,
        ["eval", "--corpus", str(corpus), "--queries", str(queries), "--store", str(store_dir), "--pipeline", "vector"],
    )
    assert done.exit_code == 0, done.output


def test_a_store_of_langchain_embeddings_is_refused_by_the_cli_by_name(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    fake = DeterministicFakeEmbedding(size=32)  # stands in for OpenAIEmbeddings() and the like
    GraphFuseVectorStore.from_documents(_loaded(_folder(tmp_path)), fake, path=store_dir).close()
    manifest = json.loads((store_dir / "manifest.json").read_text())
    assert manifest["components"]["embedder"] == GIVEN_EMBEDDER
    assert "DeterministicFakeEmbedding" in manifest["embedder"]
    for args in (["query", QUESTION, "--store", str(store_dir)], ["serve", "--store", str(store_dir)]):
        done = runner.invoke(app, args)
        assert done.exit_code != 0
        assert "given in Python" in done.output, done.output
        assert "DeterministicFakeEmbedding" in done.output
    with pytest.raises(InvalidInput, match="given in Python"):
        GraphFuseVectorStore.from_path(store_dir)
    # Given again, it opens; another size is refused.
    with GraphFuseVectorStore.from_path(store_dir, DeterministicFakeEmbedding(size=32)) as store:
        assert [d.id for d in store.similarity_search("Edge Proxy retries", k=1)]
    with pytest.raises(InvalidInput, match="dimension"):
        GraphFuseVectorStore.from_path(store_dir, DeterministicFakeEmbedding(size=16))


async def test_async_open(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    store = await GraphFuseVectorStore.afrom_documents(
        _loaded(_folder(tmp_path)), GraphFuseEmbeddings(HashingEmbedder()), path=store_dir
    )
    await store.aclose()
    async with await GraphFuseVectorStore.afrom_path(store_dir) as again:
        assert [d.id for d in await again.asimilarity_search(QUESTION, k=1)]
