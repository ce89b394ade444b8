"""Long documentation pages in ``multihop``: lexical search by passage, and one-word titles that most pages use."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphfuse import Document, InvalidInput, Query
from graphfuse.embedders import HashingEmbedder
from graphfuse.hosts import StageRunContext
from graphfuse.indexing import TitleLinker
from graphfuse.multihop import (
    BM25Index,
    BM25Search,
    BridgeSearch,
    CorpusCache,
    EntitySeeds,
    acorpus_indexes,
    hybrid,
    lexical,
    multihop,
)
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore

_FILLER = " ".join(f"filler{i}" for i in range(40))


def _chunk(page: str, n: int, text: str, title: str) -> Document:
    return Document(
        f"{page}#{n}", text, {"title": title, "graphfuse_kind": "chunk", "parent_id": page, "chunk_index": n}
    )


def _pages() -> list[Document]:
    # "guide" is long: the question's words are spread over three of its sections. "strict" says
    # them together in one short passage. By whole page the long one wins; by passage, the short.
    sections = [
        "Models validate input data. " + _FILLER,
        "Lists hold items of one type. " + _FILLER,
        "Strict mode refuses coercion. " + _FILLER,
    ]
    return [
        Document("guide", " ".join(sections), {"title": "Guide", "graphfuse_kind": "document", "graphfuse_chunks": 3}),
        *(_chunk("guide", i, s, "Guide") for i, s in enumerate(sections)),
        Document("strict", "Strict items in lists of models. Nothing else here.", {"title": "Strict Items"}),
    ]


QUESTION = "strict list items models coercion validate"


async def _graph(tmp_path: Path) -> SQLiteGraphStore:
    graph = SQLiteGraphStore(tmp_path / "graph.sqlite")
    await graph.store_documents(_pages())
    return graph


async def test_the_corpus_index_holds_the_pages_by_passage(tmp_path: Path) -> None:
    graph = await _graph(tmp_path)
    try:
        bm25, _ = await acorpus_indexes(graph)
        assert sorted(bm25.ids) == ["guide", "strict"]  # the page index is unchanged
        assert bm25.search(QUESTION, 1)[0][0] == "guide"  # every word of the question, across sections
        assert bm25.passages is not None
        # A split page is its chunks; an unsplit one stands whole.
        assert sorted(bm25.passages.ids) == ["guide#0", "guide#1", "guide#2", "strict"]
        assert bm25.passages.search(QUESTION, 1)[0][0] == "strict"
        # The opening chunk states the page's subject, the later ones none.
        assert bm25.passages.subjects is not None
        assert sorted(bm25.passages.subjects.ids) == ["guide#0", "strict"]
        # The store's persisted cache gives the same passages, also when loaded back warm.
        for _ in range(2):
            cached, _ = await CorpusCache(tmp_path).aindexes(graph)
            assert cached.passages is not None
            assert sorted(cached.passages.ids) == sorted(bm25.passages.ids)
            got, want = cached.passages.search(QUESTION, 5), bm25.passages.search(QUESTION, 5)
            assert [h[0] for h in got] == [h[0] for h in want]
            assert [h[1] for h in got] == pytest.approx([h[1] for h in want])
    finally:
        await graph.close()


async def test_an_unsplit_corpus_has_no_passage_index(tmp_path: Path) -> None:
    graph = SQLiteGraphStore(tmp_path / "graph.sqlite")
    try:
        await graph.store_documents([Document("a", "Ada wrote notes.", {"title": "Ada"}), Document("b", "Bob.")])
        assert (await acorpus_indexes(graph))[0].passages is None
        assert (await CorpusCache(tmp_path).aindexes(graph))[0].passages is None
    finally:
        await graph.close()


async def test_multihop_searches_words_by_passage(tmp_path: Path) -> None:
    graph = await _graph(tmp_path)
    try:
        bm25, linker = await acorpus_indexes(graph)
        pipeline = multihop(InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(16), bm25=bm25, linker=linker)
        search = next(s for s in pipeline.stages if isinstance(s, BM25Search))
        out = await search.run(Query(QUESTION), [], StageRunContext())
        best = max(out, key=lambda c: c.signals["bm25"])
        assert best.id == "strict"  # by page, "guide" would have the best BM25
        assert any(isinstance(s, BridgeSearch) and "4 documents" in repr(s) for s in pipeline.stages)
        assert bm25.with_passages(None).passages is None
        with pytest.raises(InvalidInput, match="passages must be a BM25Index"):
            bm25.with_passages("guide#0")  # type: ignore[arg-type]
    finally:
        await graph.close()


async def test_the_bm25_and_hybrid_presets_search_by_passage_too(tmp_path: Path) -> None:
    graph = await _graph(tmp_path)
    try:
        bm25, _ = await acorpus_indexes(graph)
        # Results are passages that name their page: the short page that says the words together
        # comes first, the long page after it by its best chunk.
        results = await lexical(bm25=bm25, graph_store=graph).aretrieve(QUESTION, top_k=2)
        assert [r.document_id for r in results] == ["strict", "guide"]
        assert results[1].id.startswith("guide#")
        # Without a graph store nothing reads a chunk back as its page: the page index, page ids.
        bare = await lexical(bm25=bm25).aretrieve(QUESTION, top_k=2)
        assert [r.id for r in bare] == ["guide", "strict"]
        # hybrid: the vector side finds chunks; its BM25 side now returns the same ids (an empty
        # vector store here, so the ranking is the lexical one).
        pipeline = hybrid(LocalVectorStore(), HashingEmbedder(16), bm25=bm25, graph_store=graph)
        results = await pipeline.aretrieve(QUESTION, top_k=2)
        assert [r.document_id for r in results] == ["strict", "guide"]
        search = next(s for s in pipeline.stages if isinstance(s, BM25Search))
        assert "4 documents" in repr(search)
    finally:
        await graph.close()


async def test_a_one_word_title_most_pages_use_weighs_less() -> None:
    # "Models" titles a page, and four pages of five say "models": in this corpus it is vocabulary.
    texts = {
        "models": "Models hold fields.",
        "json": "JSON output of models.",
        "errors": "Errors of models.",
        "types": "Types in models.",
        "mypy": "The mypy plugin.",
    }
    store = InMemoryGraphStore()
    await store.store_documents([Document(i, t, {"title": i}) for i, t in texts.items()])
    words = BM25Index(list(texts.items()))
    assert words.document_share("models") == pytest.approx(0.8)
    assert words.document_share("mypy") == pytest.approx(0.2)
    assert words.document_share("two words") == 0.0
    linker = TitleLinker({"Models": ["models"], "Mypy": ["mypy"]})
    question = Query("Do Models work with Mypy?")
    plain = await EntitySeeds(store, linker).run(question, [], StageRunContext())
    assert {c.id: c.signals["entity"] for c in plain} == {"models": 0.6, "mypy": 0.6}
    weighed = await EntitySeeds(store, linker, words=words).run(question, [], StageRunContext())
    got = {c.id: c.signals["entity"] for c in weighed}
    assert got == pytest.approx({"models": 0.6 * 0.2, "mypy": 0.6 * 0.8})
    with pytest.raises(InvalidInput, match="words must be a BM25Index"):
        EntitySeeds(store, linker, words="models")  # type: ignore[arg-type]


async def test_a_changed_chunk_is_picked_up_by_the_cache(tmp_path: Path) -> None:
    graph = await _graph(tmp_path)
    try:
        await CorpusCache(tmp_path).arefresh(graph)
        await graph.store_documents([_chunk("guide", 1, "Zebra crossings only.", "Guide")])
        cached, _ = await CorpusCache(tmp_path).aindexes(graph)
        assert cached.passages is not None
        assert cached.passages.search("zebra", 5)[0][0] == "guide#1"
        assert cached.passages.search("hold", 5) == []  # the old text of that chunk is gone
        assert cached.search("zebra", 5) == []  # the page's own row was not rewritten
    finally:
        await graph.close()
