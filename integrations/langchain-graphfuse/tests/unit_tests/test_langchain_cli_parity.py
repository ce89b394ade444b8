"""The same folder through LangChain's directory loading and through `graphfuse index`: the same graph."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_graphfuse import GraphFuseEmbeddings, GraphFuseVectorStore
from typer.testing import CliRunner

from graphfuse import run_sync
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import aopen_store

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community announces its sunset
    from langchain_community.document_loaders import DirectoryLoader, TextLoader

PAGES = {  # a docs folder: front matter, headings, relative links, a wikilink, names in the text
    "index.md": "---\ntitle: Handbook\n---\n# Welcome\n\nStart with [deploying](guide/deploy.md), [[Edge Proxy]].\n",
    "guide/deploy.md": "# Deploying\n\nRun the service behind the [Edge Proxy](../proxy.md). Ask Maria Lopez.\n",
    "proxy.md": "# Edge Proxy\n\nThe Edge Proxy retries twice.\n\n## Limits\n\nMaria Lopez set them in Berlin.\n",
}
TYPES = ("LINKS_TO", "MENTIONS", "PART_OF", "MENTIONED_IN", "CO_OCCURS_WITH", "CO_MENTION")


def _graph(store_dir: Path) -> tuple[dict[str, Any], dict[str, set[tuple[str, str]]]]:
    async def read() -> tuple[dict[str, Any], dict[str, set[tuple[str, str]]]]:
        async with await aopen_store(store_dir, mode="ro") as store:
            docs = {d.id: (d.content, d.metadata.get("title")) async for d in store.graph.iter_documents()}
            relations = {}
            for kind in TYPES:
                ids, matrix = await store.graph.adjacency([kind])
                coo = matrix.tocoo()
                relations[kind] = {(ids[r], ids[c]) for r, c in zip(coo.row, coo.col, strict=True)}
            return docs, relations

    return run_sync(read())


def test_langchain_loading_of_markdown_builds_the_clis_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "folder"
    for name, text in PAGES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    done = CliRunner().invoke(app, ["index", str(folder), "--store", str(tmp_path / "cli"), "--embedder", "hashing"])
    assert done.exit_code == 0, done.output
    monkeypatch.chdir(folder)  # the loader's sources relative to the folder, as the CLI's ids are
    docs = DirectoryLoader(".", glob="**/*.md", loader_cls=TextLoader).load()
    embeddings = GraphFuseEmbeddings(HashingEmbedder())
    GraphFuseVectorStore.from_documents(docs, embeddings, path=tmp_path / "langchain").close()
    cli, langchain = _graph(tmp_path / "cli"), _graph(tmp_path / "langchain")
    assert langchain[0] == cli[0]  # the same documents (ids, text) and titles
    assert langchain[1] == cli[1]
    assert any(langchain[1].values())
