"""LangChain's directory loading gives the graph `graphfuse index` builds from the same folder.

For a folder of .md, .rst or .txt pages with headings and links, the records from
``source_records(DirectoryLoader(folder, glob="**/*.md", loader_cls=TextLoader).load())`` have
the same documents, titles, texts and links as ``read_sources([folder])`` (the CLI's path), and
the indexer makes the same relations from both.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_community.document_loaders import DirectoryLoader, TextLoader
from langchain_graphfuse import source_records

from graphfuse import run_sync
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, read_sources
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

FOLDERS = {
    ".md": {
        "index.md": "# Home\n\nStart with [the guide](guide/start.md), then [[api]]. The Overview pages differ.\n",
        "guide/start.md": "Getting started\n===============\n\nBack [home](../index.md).\n\n```\n# not a title\n```\n",
        "guide/overview.md": "# Overview\n\nThe guide's overview; see Getting started.\n",
        "api/overview.md": "# Overview\n\nThe API's overview.\n",
        "api.md": "---\ntitle: API reference\n---\nThe API. Getting started explains it.\n",
        "notes/no-heading.md": "Just words, and the API reference.\n",
    },
    ".rst": {
        "conf.py": "project = 'Demo'\n",
        "index.rst": "Home\n====\n\n.. toctree::\n\n   guide/start\n   api\n\nSee :ref:`start-here`.\n",
        "guide/start.rst": (
            ".. _start-here:\n\nGetting started\n---------------\n\n.. code-block:: python\n   :caption: x\n\n"
            "   # not a title\n\nThen :doc:`../api` and :class:`~demo.App`.\n"
        ),
        "guide/overview.rst": "Overview\n========\n\nThe guide's overview; see Getting started.\n",
        "api/overview.rst": "Overview\n========\n\nThe API's overview, `home <../index.html>`_.\n",
        "api.rst": "API reference\n=============\n\n.. autoclass:: demo.App\n\nThe API.\n",
        "notes/no_title.rst": "Just words, and the API reference.\n",
    },
    ".txt": {
        "index.txt": "Home\n****\n\nStart with Getting started, then the API reference.\n",
        "guide/start.txt": "Getting started\n===============\n\n   # not a title\n   x = 1\n",
        "guide/overview.txt": "Overview\n========\n\nThe guide's overview.\n",
        "api/overview.txt": "# Overview\n\nThe API's overview.\n",
        "notes/no-heading.txt": "Just words about Home.\n",
    },
}


def _folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    return root


def _graph(records: list[SourceRecord]) -> set[tuple[str, str, str]]:
    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    Indexer.for_records(records, graph, vectors, HashingEmbedder(dimension=32)).index(records)
    relations = run_sync(graph.relations([r.id for r in records]))
    return {(r.source, r.target, r.type) for r in relations}


@pytest.mark.parametrize("suffix", sorted(FOLDERS))
def test_loader_records_and_graph_equal_the_cli(tmp_path: Path, suffix: str) -> None:
    folder = _folder(tmp_path / "docs", FOLDERS[suffix])
    expected = list(read_sources([folder]))
    loader = DirectoryLoader(str(folder), glob=f"**/*{suffix}", loader_cls=TextLoader)  # type: ignore[arg-type]
    loaded = source_records(loader.load())

    # The loader's ids are the files' paths; the CLI names documents by the path under the folder.
    def rel(doc_id: str) -> str:
        return Path(doc_id).relative_to(folder).as_posix()

    got = {rel(r.id): r for r in loaded}
    want = {r.id: r for r in expected}
    assert sorted(got) == sorted(want)
    for doc_id, record in want.items():
        other = got[doc_id]
        assert other.title == record.title, doc_id
        assert other.text == record.text, doc_id
        assert [rel(x) for x in other.links] == list(record.links), doc_id
    assert want["guide/start" + suffix].title == "Getting started"  # (never the code comment)
    assert any(r.links for r in expected) == (suffix != ".txt")

    relations = {(rel(s.split("#")[0]), rel(t.split("#")[0]), kind) for s, t, kind in _graph(loaded)}
    cli = {(s.split("#")[0], t.split("#")[0], kind) for s, t, kind in _graph(expected)}
    assert relations == cli
    assert {kind for _, _, kind in cli} >= {"MENTIONS"} | ({"LINKS_TO"} if suffix != ".txt" else set())
