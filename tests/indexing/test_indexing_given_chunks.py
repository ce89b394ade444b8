"""A host's own chunks (SourceRecord.chunks): kept as given, with their metadata, as the page's chunk nodes."""

from __future__ import annotations

import pytest

from graphfuse import InvalidInput
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import KIND_KEY, MENTIONS, PART_OF, Chunk, Indexer, SourceRecord, TitleLinker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

DIM = 32
PAGE = "# Guide\n\nFirst part about Paris.\n\nSecond part about the Louvre."


def _page(*parts: tuple[str, dict[str, object]]) -> SourceRecord:
    chunks = tuple(Chunk(i, text, 0, len(text), metadata=meta) for i, (text, meta) in enumerate(parts))
    return SourceRecord("guide", PAGE, title="Guide", metadata={"source": "guide.md"}, chunks=chunks)


async def test_the_indexer_keeps_the_chunks_given_with_their_metadata() -> None:
    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    indexer = Indexer(graph, vectors, HashingEmbedder(dimension=DIM), extractors=[TitleLinker()])
    page = _page(("First part about Paris.", {"node": "a"}), ("Second part about the Louvre.", {"node": "b"}))
    paris = SourceRecord("paris", "Paris is a city.", title="Paris")
    report = await indexer.aindex([page, paris])
    assert report.chunks == 3  # the page's two chunks and the short page

    docs = await graph.get_documents(["guide", "guide#0", "guide#1"])
    assert docs["guide"].content == PAGE  # the page keeps its whole text
    assert docs["guide"].metadata[KIND_KEY] == "document"
    assert "node" not in docs["guide"].metadata
    for i, node in enumerate(("a", "b")):
        chunk = docs[f"guide#{i}"]
        assert chunk.content == page.chunks[i].text
        assert chunk.metadata[KIND_KEY] == "chunk"
        assert chunk.metadata["node"] == node  # its own metadata over the page's
        assert chunk.metadata["source"] == "guide.md"
        assert chunk.metadata["parent_id"] == "guide"
        assert chunk.metadata["chunk_index"] == i
    rels = {(r.source, r.target, r.type) for r in await graph.relations(["guide#0", "guide#1"])}
    assert {("guide#0", "guide", PART_OF), ("guide#1", "guide", PART_OF), ("guide#0", "paris", MENTIONS)} <= rels
    # The vectors carry the chunk's metadata too, so a filter on it applies to the vector search.
    louvre = await HashingEmbedder(dimension=DIM).embed_query("Louvre")
    hits = await vectors.search(louvre, limit=5, filter={"node": "b"})
    assert [h.id for h in hits] == ["guide#1"]


async def test_changing_the_given_chunks_reindexes_the_page() -> None:
    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    indexer = Indexer(graph, vectors, HashingEmbedder(dimension=DIM))
    await indexer.aindex([_page(("First part.", {}), ("Second part.", {}))])
    again = await indexer.aindex([_page(("First part.", {}), ("Second part.", {}))])
    assert again.skipped == 1
    changed = await indexer.aindex([_page(("First part.", {}), ("Second", {}), ("part.", {}))])
    assert changed.documents == 1
    assert set(await graph.get_documents(["guide#0", "guide#1", "guide#2"])) == {"guide#0", "guide#1", "guide#2"}
    await indexer.aindex([_page(("First part.", {}), ("Second part.", {}))])
    assert "guide#2" not in await graph.get_documents(["guide#2"])  # the stale chunk is gone


@pytest.mark.parametrize(
    ("chunks", "message"),
    [
        ((Chunk(0, "only one", 0, 8),), "one chunk is the document itself"),
        ((Chunk(1, "a", 0, 1), Chunk(0, "b", 1, 2)), r"chunk 0: has index 1"),
        ((Chunk(0, "a", 0, 1), Chunk(1, "  ", 1, 2)), r"chunk 1: text must be a non-empty string"),
        ((Chunk(0, "a", 0, 1, metadata={"parent_id": "x"}), Chunk(1, "b", 1, 2)), r"'parent_id' is reserved"),
        ((Chunk(0, "a", 0, 1, metadata={"when": object()}), Chunk(1, "b", 1, 2)), r"chunk 0"),
        (("a", "b"), r"chunk 0: expected a graphfuse.indexing.Chunk"),
        ("ab", r"chunks must be a sequence of Chunk"),
    ],
)
def test_bad_chunks_are_refused_naming_the_record_and_chunk(chunks: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        SourceRecord("guide", PAGE, chunks=chunks)  # type: ignore[arg-type]
