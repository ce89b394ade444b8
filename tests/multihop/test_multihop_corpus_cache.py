"""CorpusCache: the multihop BM25 index and title linker persisted in a store directory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import graphfuse.multihop._corpus_cache as corpus_cache_module
from graphfuse import Document, InvalidInput
from graphfuse.multihop import BM25Index, CorpusCache, acorpus_indexes
from graphfuse.stores import InMemoryGraphStore, SQLiteGraphStore

QUERIES = ["river bridge", "Ada Lovelace engine", "the old mill", "zürich café", "nothing matches xyzzy"]


def _docs() -> list[Document]:
    return [
        Document("ada", "Ada Lovelace wrote notes on the Analytical Engine.", {"title": "Ada Lovelace", "lang": "en"}),
        Document("babbage", "Charles Babbage designed the engine.", {"title": "Charles Babbage", "lang": "en"}),
        Document("bridge", "A stone bridge crosses the river near the old mill.", {"title": "Old Bridge"}),
        Document("mill", "The old mill ground grain by the river.", {"title": "Old Mill", "lang": "de"}),
        Document("cafe", "Ein Café in Zürich am Fluss.", {"title": "Café Zürich"}),
        Document("untitled", "A river, a bridge and a mill without a title."),
        # A line of dialogue has no subject: it is left out of the subjects index.
        Document("chat", "Ana: meet me at the old mill? Bob: sure."),
        # The indexer's chunk nodes are left out of the corpus indexes.
        Document("ada#1", "Analytical Engine notes", {"graphfuse_kind": "chunk", "parent_id": "ada"}),
    ]


class CountingStore:
    """The real SQLite store, counting how often the corpus is read back."""

    def __init__(self, inner: SQLiteGraphStore) -> None:
        self.inner = inner
        self.reads = 0

    async def generation(self) -> int:
        return await self.inner.generation()

    def iter_documents(self, **kwargs: Any) -> AsyncIterator[Document]:
        self.reads += 1
        return self.inner.iter_documents(**kwargs)


async def _same(cached: tuple[BM25Index, Any], graph: SQLiteGraphStore) -> None:
    bm25, linker = await acorpus_indexes(graph)
    assert sorted(cached[0].ids) == sorted(bm25.ids)
    for q in QUERIES:
        got, want = cached[0].search(q, 10), bm25.search(q, 10)
        assert [h[0] for h in got] == [h[0] for h in want]
        assert [h[1] for h in got] == pytest.approx([h[1] for h in want])
        assert cached[0].subjects is not None
        assert bm25.subjects is not None
        got, want = cached[0].subjects.search(q, 10), bm25.subjects.search(q, 10)
        assert [h[0] for h in got] == [h[0] for h in want]
        assert [h[1] for h in got] == pytest.approx([h[1] for h in want])
    assert sorted(cached[0].subjects.ids) == sorted(bm25.subjects.ids)
    assert "chat" in bm25.ids
    assert "chat" not in bm25.subjects.ids
    text = "Ada Lovelace met Charles Babbage at the Old Mill and the Café Zürich."
    assert sorted(map(str, cached[1].extract(text))) == sorted(map(str, linker.extract(text)))


@pytest.fixture
async def graph(tmp_path: Path) -> AsyncIterator[SQLiteGraphStore]:
    store = SQLiteGraphStore(tmp_path / "graph.sqlite")
    await store.store_documents(_docs())
    yield store
    await store.close()


async def test_equals_the_indexes_built_from_the_store(graph: SQLiteGraphStore, tmp_path: Path) -> None:
    cache = CorpusCache(tmp_path)
    await _same(await cache.aindexes(graph), graph)
    assert (tmp_path / "corpus_index.npz").is_file()


async def test_warm_load_reads_no_document(graph: SQLiteGraphStore, tmp_path: Path) -> None:
    spy = CountingStore(graph)
    await CorpusCache(tmp_path).arefresh(spy)  # type: ignore[arg-type]
    assert spy.reads == 1
    bm25, _ = await CorpusCache(tmp_path).aindexes(spy)  # type: ignore[arg-type]
    assert spy.reads == 1
    assert bm25.search("stone bridge", 1)[0][0] == "bridge"


async def test_changes_are_applied_incrementally(
    graph: SQLiteGraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = CorpusCache(tmp_path)
    await cache.arefresh(graph)
    tokenised: list[str] = []
    real = corpus_cache_module.bm25_tokens

    def counting(text: str, **kwargs: Any) -> list[str]:
        if text != corpus_cache_module._PROBE:
            tokenised.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(corpus_cache_module, "bm25_tokens", counting)
    await graph.store_documents(
        [
            Document("mill", "The old mill now makes paper by the river.", {"title": "Old Mill", "lang": "de"}),
            Document("lab", "A laboratory by the river tests bridges.", {"title": "River Lab"}),
        ]
    )
    await graph.delete_documents(["babbage"])
    cached = await cache.aindexes(graph)
    # The changed and the new document only: each one's text (with its title) and its subject.
    assert sorted(tokenised) == [
        "A laboratory by the river tests bridges.",
        "Old Mill The old mill now makes paper by the river.",
        "River Lab A laboratory by the river tests bridges.",
        "The old mill now makes paper by the river.",
    ]
    assert "babbage" not in cached[0].ids
    assert cached[0].search("paper", 1)[0][0] == "mill"
    await _same(cached, graph)


async def test_metadata_change_alone_is_picked_up_for_filters(graph: SQLiteGraphStore, tmp_path: Path) -> None:
    from graphfuse import MetadataFilter

    cache = CorpusCache(tmp_path)
    await cache.arefresh(graph)
    await graph.store_documents(
        [
            Document(
                "bridge", "A stone bridge crosses the river near the old mill.", {"title": "Old Bridge", "lang": "fr"}
            )
        ]
    )
    bm25, _ = await cache.aindexes(graph)
    hits = bm25.search("bridge", 5, filter=MetadataFilter.parse({"lang": "fr"}))
    assert [h[0] for h in hits] == ["bridge"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
async def test_damaged_file_is_rebuilt(graph: SQLiteGraphStore, tmp_path: Path, damage: str) -> None:
    cache = CorpusCache(tmp_path)
    await cache.arefresh(graph)
    path = tmp_path / "corpus_index.npz"
    raw = path.read_bytes()
    path.write_bytes({"garbage": b"not a zip file", "truncated": raw[: len(raw) // 2], "empty": b""}[damage])
    await _same(await cache.aindexes(graph), graph)
    assert path.read_bytes() != b""


async def test_another_tokeniser_rebuilds_in_full(
    graph: SQLiteGraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = CorpusCache(tmp_path)
    await cache.arefresh(graph)
    monkeypatch.setattr(corpus_cache_module, "_probe", lambda: ["a", "different", "tokeniser"])
    spy = CountingStore(graph)
    await cache.aindexes(spy)  # type: ignore[arg-type]
    assert spy.reads == 1


class _Unversioned(InMemoryGraphStore):
    """A graph store that cannot say when it was written to (as a plugin's may not)."""

    generation = None  # type: ignore[assignment]


async def test_a_store_without_generation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="iter_documents and generation"):
        await CorpusCache(tmp_path).aindexes(_Unversioned())


async def test_no_temporary_file_is_left(graph: SQLiteGraphStore, tmp_path: Path) -> None:
    cache = CorpusCache(tmp_path)
    await cache.arefresh(graph)
    await graph.delete_documents(["ada"])
    await cache.arefresh(graph)
    assert _corpus_files(tmp_path) == ["corpus_index.npz"]


def _corpus_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if "corpus" in p.name)
