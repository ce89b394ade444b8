"""The CLI's persisted corpus indexes (index, query, delete) and the eval progress steps."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from graphfuse import Document
from graphfuse.cli import app
from graphfuse.evaluation import aevaluate, load_corpus, load_queries
from graphfuse.multihop import CorpusCache
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, aopen_store

CORPUS = [
    {
        "id": "film",
        "title": "Gaby: A True Story",
        "text": "Gaby: A True Story is a 1987 film directed by Luis Mandoki.",
    },
    {"id": "mandoki", "title": "Luis Mandoki", "text": "Luis Mandoki is a Mexican film director born in Mexico City."},
    {"id": "river", "title": "Rhine", "text": "The Rhine rises in the Swiss Alps and flows to the North Sea."},
    {"id": "alps", "title": "Swiss Alps", "text": "The Swiss Alps are the portion of the Alps in Switzerland."},
]
QUERIES = [
    {"id": "q1", "question": "Where was the director of Gaby: A True Story born?", "gold_ids": ["film", "mandoki"]},
    {"id": "q2", "question": "Where does the Rhine rise?", "gold_ids": ["river"]},
]
QUESTION = "Where was the director of Gaby: A True Story born?"


def _write(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class CountingStore:
    """The real graph store, counting how often the corpus is read back."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.reads = 0

    async def generation(self) -> int:
        return int(await self.inner.generation())

    def iter_documents(self, **kwargs: Any) -> AsyncIterator[Document]:
        self.reads += 1
        result: AsyncIterator[Document] = self.inner.iter_documents(**kwargs)
        return result


async def _cache_is_current(store_dir: Path) -> bool:
    store = await aopen_store(store_dir, create=False)
    try:
        spy = CountingStore(store.graph)
        await CorpusCache(store_dir).aindexes(spy)  # type: ignore[arg-type]
        return spy.reads == 0
    finally:
        await store.aclose()


def _query(store: Path, *extra: str) -> list[str]:
    result = CliRunner().invoke(app, ["query", QUESTION, "--store", str(store), "--preset", "multihop", "--json"])
    assert result.exit_code == 0, result.output
    return [r["id"] for r in json.loads(result.stdout)]


def test_index_writes_the_corpus_indexes_and_query_uses_them_without_writing(tmp_path: Path) -> None:
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    store = tmp_path / "store"
    result = CliRunner().invoke(app, ["index", str(corpus), "--store", str(store), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    assert (store / "corpus_index.npz").is_file()
    assert asyncio.run(_cache_is_current(store))
    warm = _query(store)
    assert warm[0] in {"film", "mandoki"}
    (store / "corpus_index.npz").unlink()
    assert _query(store) == warm  # rebuilt in memory from the store: the same answer
    assert not (store / "corpus_index.npz").exists()  # a query writes nothing


def test_delete_keeps_the_corpus_indexes_current(tmp_path: Path) -> None:
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    store = tmp_path / "store"
    assert (
        CliRunner().invoke(app, ["index", str(corpus), "--store", str(store), "--embedder", "hashing"]).exit_code == 0
    )
    result = CliRunner().invoke(app, ["delete", "mandoki", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert asyncio.run(_cache_is_current(store))
    assert "mandoki" not in _query(store)


async def test_store_directory_pipeline_reads_the_cache(tmp_path: Path) -> None:
    store = await aopen_store(tmp_path / "store", create=True, embedder="hashing")
    try:
        from graphfuse.indexing import Indexer, SourceRecord, TitleLinker

        indexer = Indexer(store.graph, store.vectors, store.embedder, extractors=[TitleLinker()])
        await indexer.aindex([SourceRecord(id=r["id"], text=r["text"], title=r["title"]) for r in CORPUS])
        assert await store.arefresh_corpus_indexes() is True
        pipeline = await store.apipeline("multihop")
        results = await pipeline.aretrieve("Where does the Rhine rise?", top_k=3)
        assert results[0].id == "river"
    finally:
        await store.aclose()


async def test_evaluate_reports_every_step(tmp_path: Path) -> None:
    from graphfuse.embedders import HashingEmbedder

    corpus = load_corpus(_write(tmp_path / "c.jsonl", CORPUS))
    queries = load_queries(_write(tmp_path / "q.jsonl", QUERIES))
    seen: dict[str, list[tuple[int, int]]] = {}
    await aevaluate(
        corpus,
        queries,
        ["vector", "bm25"],
        graph_store=InMemoryGraphStore(),
        vector_store=LocalVectorStore(),
        embedder=HashingEmbedder(64),
        advance=lambda step, done, total: seen.setdefault(step, []).append((done, total)),
    )
    assert list(seen) == ["reading", "indexing", "embedding queries", "pipeline vector", "pipeline bm25"]
    assert seen["reading"] == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]  # per record, before any write
    assert seen["indexing"][0] == (0, 4)
    assert seen["indexing"][1] == (1, 4)  # the first batch is one record
    assert seen["indexing"][-1] == (4, 4)
    for step in ("embedding queries", "pipeline vector", "pipeline bm25"):
        assert seen[step] == [(0, 2), (1, 2), (2, 2)]


def test_cli_eval_runs_with_its_progress_bars(tmp_path: Path) -> None:
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    queries = _write(tmp_path / "q.jsonl", QUERIES)
    args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "vector", "--embedder", "hashing"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "vector" in result.stdout


async def test_warm_multihop_build_reads_no_document_and_keeps_timeline_and_entities(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from datetime import datetime, timezone

    from graphfuse.indexing import Indexer, SourceRecord, TextEntityExtractor, TitleLinker
    from graphfuse.multihop import aentity_matcher
    from graphfuse.timeaware import Timeline

    store = await aopen_store(tmp_path / "store", create=True, embedder="hashing")
    try:
        chats = [
            "Wolfgang Schulz booked the Harbor Hall for the spring concert.",
            "LiHua asked WolfgangSchulz whether the Harbor Hall has a piano.",
            "Adam Smith moved the book club to Friday evening.",
            "LiHua and Adam Smith planned a trip to Lake Como in May.",
        ]
        records = [
            SourceRecord(id=f"m{i}", text=t, created_at=datetime(2026, 3, i + 1, 9, tzinfo=timezone.utc))
            for i, t in enumerate(chats)
        ] + [SourceRecord(id="undated", text="Wolfgang Schulz keeps notes without dates.")]
        indexer = Indexer(
            store.graph,
            store.vectors,
            store.embedder,
            extractors=[TitleLinker(), TextEntityExtractor()],
            entity_graph=True,
        )
        await indexer.aindex(records)
        assert await store.arefresh_corpus_indexes() is True
        cached = await CorpusCache(store.path).ainputs(store.graph)
        fresh_timeline = await Timeline.afrom_store(store.graph)
        assert repr(cached["timeline"]) == repr(fresh_timeline) == "Timeline(4 dated, 1 undated)"
        fresh_entities = await aentity_matcher(store.graph)
        assert len(cached["entities"]) == len(fresh_entities) > 0
        question = "What did wolfgang schulz book at the Harbor Hall?"
        assert cached["entities"].match(question) == fresh_entities.match(question) != []

        reads = 0
        real = store.graph.iter_documents

        def counting(**kwargs: Any) -> AsyncIterator[Document]:
            nonlocal reads
            reads += 1
            result: AsyncIterator[Document] = real(**kwargs)
            return result

        monkeypatch.setattr(store.graph, "iter_documents", counting)
        pipeline = await store.apipeline("multihop")
        assert reads == 0  # BM25, titles, timeline and entity nodes all came from the file
        names = [stage.name for stage in pipeline.stages]
        assert {"time", "text_entity"} <= set(names)
        results = await pipeline.aretrieve(question, top_k=3)
        assert results[0].id in {"m0", "m1"}
    finally:
        await store.aclose()
