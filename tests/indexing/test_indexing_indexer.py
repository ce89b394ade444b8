"""The indexer: chunks, vectors, relations (links, mentions, co-mentions), re-index, delete, resume."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import pytest

from graphfuse import InvalidInput, NotFound
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import (
    CO_MENTION,
    LINKS_TO,
    MENTIONS,
    PART_OF,
    HeuristicNameExtractor,
    Indexer,
    SourceRecord,
    TitleLinker,
    TokenChunker,
)
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore

DIM = 32


def _records() -> list[SourceRecord]:
    return [
        SourceRecord("paris", "Paris is the capital of France. Victor Hugo lived there.", title="Paris"),
        SourceRecord("france", "France is a country in western Europe.", title="France", links=("paris", "nowhere")),
        SourceRecord("hugo", "Victor Hugo wrote Les Miserables while in exile.", title="Victor Hugo"),
        SourceRecord("exile", "Guernsey hosted Victor Hugo during his exile.", title="Guernsey"),
    ]


async def _relations(store: InMemoryGraphStore | SQLiteGraphStore, ids: Sequence[str]) -> set[tuple[str, str]]:
    related = await store.related(list(ids), depth=1)
    return {(r.seed, r.id) for r in related}


Stores = tuple[InMemoryGraphStore, LocalVectorStore]


@pytest.fixture
def stores() -> Stores:
    return InMemoryGraphStore(), LocalVectorStore()


def _indexer(graph: object, vectors: object, **kwargs: object) -> Indexer:
    return Indexer(graph, vectors, HashingEmbedder(DIM), extractors=[TitleLinker()], **kwargs)  # type: ignore[arg-type]


async def test_short_documents_stay_whole_with_links_and_mentions(stores: Stores) -> None:
    graph, vectors = stores
    report = await _indexer(graph, vectors).aindex(_records())
    assert (report.documents, report.chunks, report.skipped) == (4, 4, 0)
    assert await vectors.count() == 4
    doc = await graph.get_document("paris")
    assert doc.content == _records()[0].text
    assert doc.metadata["title"] == "Paris"
    rels = set(graph._relations)
    assert ("france", "paris", LINKS_TO) in rels
    assert ("paris", "france", MENTIONS) in rels  # "capital of France"
    assert ("paris", "hugo", MENTIONS) in rels
    assert ("exile", "hugo", MENTIONS) in rels
    # A link to an unknown id is a counted warning, not a crash.
    assert any("1 link(s) to 1 unknown document id(s)" in w and "nowhere" in w for w in report.warnings)
    assert report.relations == len(rels)


async def test_co_mentions_link_passages_sharing_a_name(stores: Stores) -> None:
    graph, vectors = stores
    records = [
        SourceRecord("a", "Ada Lovelace met Charles Babbage in London."),
        SourceRecord("b", "Charles Babbage designed the Analytical Engine."),
        SourceRecord("c", "An unrelated passage about rivers."),
    ]
    ix = Indexer(graph, vectors, HashingEmbedder(DIM), extractors=[HeuristicNameExtractor()])
    await ix.aindex(records)
    assert set(graph._relations) == {("a", "b", CO_MENTION)}


async def test_co_mention_cap_skips_hub_entities(stores: Stores) -> None:
    graph, vectors = stores
    records = [SourceRecord(f"d{i}", f"New York is big, said passage {i}.") for i in range(4)]
    ix = Indexer(graph, vectors, HashingEmbedder(DIM), extractors=[HeuristicNameExtractor()], co_mention_cap=3)
    report = await ix.aindex(records)
    assert not graph._relations
    assert any("more than 3 passages" in w for w in report.warnings)


async def test_long_document_is_chunked_with_parent_pointers(stores: Stores) -> None:
    graph, vectors = stores
    text = " ".join(f"word{i}" for i in range(25))
    ix = Indexer(graph, vectors, HashingEmbedder(DIM), chunker=TokenChunker(max_tokens=10, overlap=2))
    report = await ix.aindex([SourceRecord("long", text, title="Long")])
    assert report.chunks == 3  # windows start at tokens 0, 8, 16
    chunks = await graph.get_documents(["long#0", "long#1", "long#2"])
    assert chunks["long#1"].content == " ".join(f"word{i}" for i in range(8, 18))
    assert chunks["long#2"].metadata["parent_id"] == "long"
    assert chunks["long#2"].metadata["chunk_index"] == 2
    assert (await graph.get_document("long")).content == text
    assert ("long#0", "long", PART_OF) in graph._relations
    assert await vectors.count() == 3  # only the chunks are embedded


async def test_reindex_replaces_instead_of_duplicating(stores: Stores) -> None:
    graph, vectors = stores
    ix = _indexer(graph, vectors)
    await ix.aindex(_records())
    before = set(graph._relations)
    again = await ix.aindex(_records())
    assert (again.documents, again.skipped) == (0, 4)
    assert set(graph._relations) == before
    changed = _records()
    changed[0] = SourceRecord("paris", "Paris is a large city on the Seine.", title="Paris")
    report = await ix.aindex(changed)
    assert report.documents == 1
    assert report.skipped == 3
    assert (await graph.get_document("paris")).content == "Paris is a large city on the Seine."
    rels = set(graph._relations)
    assert ("paris", "france", MENTIONS) not in rels
    assert ("paris", "hugo", MENTIONS) not in rels
    assert ("france", "paris", LINKS_TO) in rels  # owned by france: untouched
    assert await vectors.count() == 4


async def test_reindex_from_chunks_to_whole_removes_stale_chunks(stores: Stores) -> None:
    graph, vectors = stores
    ix = Indexer(graph, vectors, HashingEmbedder(DIM), chunker=TokenChunker(max_tokens=5, overlap=1))
    await ix.aindex([SourceRecord("d", "one two three four five six seven eight nine")])
    assert await vectors.count() == 2
    await ix.aindex([SourceRecord("d", "short now")])
    assert await graph.get_documents(["d#0", "d#1"]) == {}
    assert await vectors.count() == 1
    assert (await vectors.search(await HashingEmbedder(DIM).embed_query("short now"), limit=5))[0].id == "d"


async def test_delete_removes_document_chunks_vectors_and_relations(stores: Stores) -> None:
    graph, vectors = stores
    ix = _indexer(graph, vectors, chunker=TokenChunker(max_tokens=6, overlap=1))
    await ix.aindex(_records())
    assert await ix.adelete(["hugo", "missing"]) == 1
    with pytest.raises(NotFound):
        await graph.get_document("hugo")
    assert not [k for k in graph._relations if "hugo" in (k[0].split("#")[0], k[1].split("#")[0])]
    ids = {h.id for h in await vectors.search([1.0] * DIM, limit=100)}
    assert not {i for i in ids if i.split("#")[0] == "hugo"}


async def test_progress_reports_running_counts(stores: Stores) -> None:
    graph, vectors = stores
    seen: list[int] = []
    read: list[int] = []
    await _indexer(graph, vectors, batch_size=3).aindex(_records(), progress=seen.append, reading=read.append)
    assert read == [1, 2, 3, 4]  # one call per record read, before any write
    assert seen == [0, 1, 3, 4]  # writes begin, then batches of 1, 2, then what is left
    seen.clear()
    await _indexer(graph, vectors, batch_size=3).aindex(_records(), progress=seen.append)
    assert seen == [4]  # everything skipped, reported at once


class _CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(DIM)
        self.calls: list[int] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return await super().embed_documents(texts)


async def test_batches_start_small_and_hold_one_embedding_call(stores: Stores) -> None:
    graph, vectors = stores
    long_text = " ".join(f"word{i}" for i in range(40))  # 4 chunks of at most 12 tokens
    records = [SourceRecord(f"d{i}", long_text, title=f"Doc {i}") for i in range(12)]
    embedder = _CountingEmbedder()
    chunker = TokenChunker(max_tokens=12, overlap=0)
    seen: list[int] = []
    ix = Indexer(graph, vectors, embedder, chunker=chunker, batch_size=8)
    report = await ix.aindex(records, progress=seen.append)
    units = report.chunks // len(records)
    assert units > 1
    # 1, 2 records, then as many as fit in 8 units: progress moves every embedding call.
    assert seen[:3] == [0, 1, 3]
    assert all(b - a <= max(1, 8 // units) for a, b in itertools.pairwise(seen[1:]))
    assert seen[-1] == len(records)
    assert all(n <= 8 for n in embedder.calls)
    assert len(embedder.calls) == len(seen) - 1


async def test_batch_sizes_do_not_change_the_graph() -> None:
    by_size = []
    for batch_size in (1, 3, 64):
        graph, vectors = InMemoryGraphStore(), LocalVectorStore()
        await _indexer(graph, vectors, batch_size=batch_size, chunker=TokenChunker(max_tokens=6, overlap=1)).aindex(
            _records()
        )
        by_size.append((set(graph._relations), await vectors.count()))
    assert by_size[0] == by_size[1] == by_size[2]


async def test_invalid_batch_writes_nothing(stores: Stores) -> None:
    graph, vectors = stores
    records = [*_records(), SourceRecord("paris", "again")]
    with pytest.raises(InvalidInput, match="duplicate document id"):
        await _indexer(graph, vectors).aindex(records)
    with pytest.raises(InvalidInput, match="chunk id"):
        await _indexer(graph, vectors).aindex([SourceRecord("x#1", "text")])
    assert await graph.count_documents() == 0
    assert await vectors.count() == 0


class _FailingEmbedder(HashingEmbedder):
    """Fails on the ``fail_on``-th call of ``embed_documents`` (1-based), once."""

    def __init__(self, fail_on: int) -> None:
        super().__init__(DIM)
        self.calls = 0
        self.fail_on = fail_on

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("embedding service went away")
        return await super().embed_documents(texts)


async def test_interrupted_run_resumes_to_the_same_graph(tmp_path: Path) -> None:
    reference_graph, reference_vectors = InMemoryGraphStore(), LocalVectorStore()
    await _indexer(reference_graph, reference_vectors, batch_size=1).aindex(_records())
    expected = set(reference_graph._relations)

    graph = SQLiteGraphStore(tmp_path / "g.sqlite")
    vectors = LocalVectorStore(tmp_path / "v.sqlite")
    try:
        broken = Indexer(graph, vectors, _FailingEmbedder(fail_on=3), extractors=[TitleLinker()], batch_size=1)
        with pytest.raises(RuntimeError, match="went away"):
            await broken.aindex(_records())
        assert await graph.count_documents() == 2  # two batches committed before the failure
        resumed = await _indexer(graph, vectors, batch_size=1).aindex(_records())
        assert resumed.skipped == 2
        assert resumed.documents == 2
        ids = ["paris", "france", "hugo", "exile"]
        got = await _relations(graph, ids)
        want = await _relations(reference_graph, ids)
        assert got == want
        assert await graph.count_relations() == len(expected)
        assert await vectors.count() == 4
    finally:
        await graph.close()
        await vectors.close()


async def test_failure_mid_batch_leaves_documents_pending_and_redone(stores: Stores) -> None:
    _graph, vectors = stores

    class _BrokenRelations(InMemoryGraphStore):
        async def create_relations(self, relations):  # type: ignore[no-untyped-def]
            raise RuntimeError("disk full")

    broken = _BrokenRelations()
    with pytest.raises(RuntimeError, match="disk full"):
        await _indexer(broken, vectors).aindex(_records())
    doc = await broken.get_document("paris")
    assert doc.metadata["graphfuse_state"] == "pending"
    # A healthy store object over the same documents: the pending ones are redone, not skipped.
    healthy = InMemoryGraphStore()
    await healthy.store_documents(list((await broken.get_documents(["paris", "france", "hugo", "exile"])).values()))
    report = await _indexer(healthy, vectors).aindex(_records())
    assert report.skipped == 0
    assert report.documents == 4
    assert (await healthy.get_document("paris")).metadata["graphfuse_state"] == "indexed"


def test_sync_index_and_delete(stores: Stores) -> None:
    graph, vectors = stores
    ix = _indexer(graph, vectors)
    assert ix.index(_records()).documents == 4
    assert ix.delete(["paris"]) == 1


async def test_refreshes_pagerank_after_writes(stores: Stores) -> None:
    graph, vectors = stores
    await _indexer(graph, vectors).aindex(_records())
    assert graph._index is not None
    assert graph._index._pagerank is not None


def test_constructor_validation(stores: Stores) -> None:
    graph, vectors = stores
    with pytest.raises(InvalidInput, match="batch_size"):
        Indexer(graph, vectors, HashingEmbedder(DIM), batch_size=0)
    with pytest.raises(InvalidInput, match="embedder"):
        Indexer(graph, vectors, object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="extract"):
        Indexer(graph, vectors, HashingEmbedder(DIM), extractors=[object()])  # type: ignore[list-item]


async def test_entity_nodes_in_a_namespace_with_their_metadata() -> None:
    from graphfuse.indexing import ENTITY_PREFIX, MENTIONED_IN, TextEntityExtractor

    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    options = {"extractors": [TextEntityExtractor()], "entity_graph": True}
    indexer = Indexer(
        graph, vectors, HashingEmbedder(DIM), entity_namespace="t1/", entity_metadata={"tenant": "t1"}, **options
    )
    await indexer.aindex([SourceRecord(id="t1/d", text="The plant in Tarvin opened.")])
    node = f"{ENTITY_PREFIX}t1/tarvin"
    got = (await graph.get_documents([node]))[node]
    assert got.metadata == {"tenant": "t1", "graphfuse_kind": "entity", "name": "tarvin", "mentions": 1}
    assert [r.type for r in await graph.relations([node])] == [MENTIONED_IN]
    for bad in ({"name": "x"}, {"mentions": 2}, {"graphfuse_kind": "doc"}, {"parent_id": "p"}):
        with pytest.raises(InvalidInput, match="entity_metadata"):
            Indexer(graph, vectors, HashingEmbedder(DIM), entity_metadata=bad, **options)
    with pytest.raises(InvalidInput, match="entity_namespace"):
        Indexer(graph, vectors, HashingEmbedder(DIM), entity_namespace=3, **options)  # type: ignore[arg-type]
