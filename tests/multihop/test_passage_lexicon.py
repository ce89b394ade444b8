"""Passages scored from the passage index's words: the same counts and results as tokenising the chunks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from graphfuse import Document, InvalidInput, Passages, Query, Result, VectorRecord
from graphfuse.embedders import HashingEmbedder
from graphfuse.multihop import BM25Index, CorpusCache, PassageLexicon, acorpus_indexes, bm25_tokens
from graphfuse.stores import LocalVectorStore, SQLiteGraphStore

SECTIONS = [
    ("Install", "Install the package with pip. Strict mode is off by default."),
    ("Strict mode", "Strict mode refuses coercion: a string is never read as an integer. Strict strict."),
    ("Lists", "Lists hold items of one type; validation checks every item of the list."),
    ("Errors", "A validation error names the field, the input and the rule that failed."),
]
QUESTIONS = ["strict mode coercion integer", "list items validation", "error field rule", "install pip", "nothing here"]


def _documents() -> list[Document]:
    page = " ".join(text for _, text in SECTIONS)
    docs = [Document("guide", page, {"title": "Guide", "graphfuse_kind": "document", "graphfuse_chunks": 4})]
    for n, (title, text) in enumerate(SECTIONS):
        meta = {"title": title, "graphfuse_kind": "chunk", "parent_id": "guide", "chunk_index": n}
        docs.append(Document(f"guide#{n}", text, meta))
    docs.append(Document("other", "Other things: strict typing of lists.", {"title": "Other"}))
    return docs


async def _stores(tmp_path: Path) -> tuple[SQLiteGraphStore, LocalVectorStore, HashingEmbedder]:
    graph = SQLiteGraphStore(tmp_path / "graph.sqlite")
    docs = _documents()
    await graph.store_documents(docs)
    embedder = HashingEmbedder(dimension=64)
    vectors = LocalVectorStore()
    chunks = [d for d in docs if d.metadata.get("graphfuse_kind") == "chunk"]
    found = await embedder.embed_documents([d.content or "" for d in chunks])
    await vectors.upsert([VectorRecord(d.id, v, {"parent_id": "guide"}) for d, v in zip(chunks, found, strict=True)])
    return graph, vectors, embedder


async def test_counts_are_those_of_the_chunk_texts_without_their_titles(tmp_path: Path) -> None:
    graph, _, _ = await _stores(tmp_path)
    try:
        bm25, _ = await acorpus_indexes(graph)
        cached, _ = await CorpusCache(tmp_path).aindexes(graph)
        for index in (bm25.passages, cached.passages):
            assert index is not None
            lexicon = PassageLexicon(index)
            ids = [f"guide#{n}" for n in range(4)]
            terms = ["strict", "mode", "install", "lists", "list", "unknownword"]
            got = lexicon.term_counts(ids, terms)
            assert got is not None
            counts, lengths = got
            for k, (_, text) in enumerate(SECTIONS):
                tokens = Counter(bm25_tokens(text))
                assert counts[k].tolist() == [tokens.get(t, 0) for t in terms]
                assert lengths[k] == sum(tokens.values())
            twice = lexicon.term_counts([*ids, "guide#1"], terms)  # an id asked twice gets its counts twice
            assert twice is not None
            assert twice[0][4].tolist() == counts[1].tolist()
            assert lexicon.term_counts(["guide#0", "guide#9"], terms) is None  # not in the index
    finally:
        await graph.close()


def test_an_index_without_counts_answers_none_and_a_wrong_index_is_refused() -> None:
    presence = BM25Index([("a", "one two")], k1=0.0)
    assert PassageLexicon(presence).term_counts(["a"], ["one"]) is None
    with pytest.raises(InvalidInput, match="BM25Index"):
        PassageLexicon("not an index")  # type: ignore[arg-type]


async def _selected(passages: Passages, question: str) -> list[tuple[str, float, str]]:
    ranked = [
        Result(Document("guide", None, {"graphfuse_chunks": 4}), 0.9, {}, {}),
        Result(Document("other", None, {}), 0.5, {}, {}),
    ]
    got = await passages.select(Query(question), ranked, 3, max_per_document=3)
    return [(r.id, round(r.score, 12), r.document.content or "") for r in got]


async def test_passages_from_the_index_equal_passages_from_the_texts(tmp_path: Path) -> None:
    graph, vectors, embedder = await _stores(tmp_path)
    try:
        bm25, _ = await acorpus_indexes(graph)
        assert bm25.passages is not None
        terms = PassageLexicon(bm25.passages)
        for lexical in (1.0, 0.5):
            vector = (vectors, embedder) if lexical < 1.0 else (None, None)
            plain = Passages(graph, *vector, lexical=lexical)
            quick = Passages(graph, *vector, lexical=lexical, terms=terms)
            for question in QUESTIONS:
                want = await _selected(plain, question)
                assert await _selected(quick, question) == want
                assert all(text for _, _, text in want)  # loaded documents, not placeholders
        # The store changes: an index of the old generation never returns a chunk that is gone, and
        # the index of the new generation (what a rebuilt pipeline holds) gives the texts' results again.
        await graph.delete_documents(["guide#1"])
        plain, stale = Passages(graph), Passages(graph, terms=terms)
        rebuilt, _ = await acorpus_indexes(graph)
        assert rebuilt.passages is not None
        fresh = Passages(graph, terms=PassageLexicon(rebuilt.passages))
        for question in QUESTIONS:
            assert "guide#1" not in [i for i, _, _ in await _selected(stale, question)]
            assert await _selected(fresh, question) == await _selected(plain, question)
    finally:
        await graph.close()


def test_passages_refuse_terms_without_term_counts(tmp_path: Path) -> None:
    graph = SQLiteGraphStore(tmp_path / "graph.sqlite")
    with pytest.raises(InvalidInput, match="term_counts"):
        Passages(graph, terms=object())  # type: ignore[arg-type]
