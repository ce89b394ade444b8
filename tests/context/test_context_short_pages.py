"""Evidence reads a short page whole: a chunk chosen for the question may lack the next hop's fact."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from graphfuse import Document, Result
from graphfuse.context import WHOLE_PAGE_CHUNKS, abuild_context, get_token_counter
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TokenChunker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

CHUNK = 40
LEAD = (
    "Anna Berg was a Norwegian film director and screenwriter. She made eleven feature films "
    "between 1962 and 1990, most of them about the coast and its fishing villages."
)
LATE = "Anna Berg died in Tromso on 4 May 2001, aged 79."
# Two chunks of at most CHUNK tokens: the lead, then the paragraph with the place of death.
SHORT = f"{LEAD} Her films were shown at festivals in Cannes and Venice. {LATE}"
FILLER = " ".join(f"Section {i} describes one more of her films in some detail." for i in range(12))
LONG = f"{LEAD} {FILLER} {LATE}"
REGEX = get_token_counter("regex")
QUESTION = "Where did the director of The Quiet Harbour die?"


@dataclass
class Indexed:
    graph: InMemoryGraphStore
    vectors: LocalVectorStore


@pytest.fixture
async def indexed() -> AsyncIterator[Indexed]:
    graph, vectors = InMemoryGraphStore(), LocalVectorStore(None)
    indexer = Indexer(graph, vectors, HashingEmbedder(64), chunker=TokenChunker(CHUNK, 8))
    await indexer.aindex(
        [SourceRecord("berg", SHORT, title="Anna Berg"), SourceRecord("berg-long", LONG, title="Anna Berg (long)")]
    )
    yield Indexed(graph, vectors)
    await graph.close()
    await vectors.close()


async def _chunks(graph: InMemoryGraphStore, page: str) -> list[Document]:
    n = (await graph.get_documents([page]))[page].metadata["graphfuse_chunks"]
    found = await graph.get_documents([f"{page}#{i}" for i in range(n)])
    return [found[f"{page}#{i}"] for i in range(n)]


async def test_evidence_reads_the_rest_of_a_short_page(indexed: Indexed) -> None:
    chunks = await _chunks(indexed.graph, "berg")
    assert len(chunks) == 2 <= WHOLE_PAGE_CHUNKS
    assert "Tromso" not in (chunks[0].content or "")
    assert "Tromso" in (chunks[1].content or "")
    results = [Result(chunks[0], 1.0, {})]  # the passage chosen for the question: the page's lead

    alone = await abuild_context(QUESTION, results, budget=200, format="evidence", counter=REGEX)
    assert "Tromso" not in alone.text  # without a store, only the returned chunk is read
    whole = await abuild_context(
        QUESTION, results, budget=200, format="evidence", counter=REGEX, graph_store=indexed.graph
    )
    assert "Anna Berg died in Tromso" in whole.text
    # The source is the page, as before: nothing the caller did not return is cited.
    assert [s.id for s in whole.sources] == [s.id for s in alone.sources] == ["berg"]


async def test_passages_format_shows_only_what_was_returned(indexed: Indexed) -> None:
    chunks = await _chunks(indexed.graph, "berg")
    ctx = await abuild_context(
        QUESTION, [Result(chunks[0], 1.0, {})], budget=500, format="passages", counter=REGEX, graph_store=indexed.graph
    )
    assert "Tromso" not in ctx.text


async def test_a_long_page_is_read_only_in_its_returned_chunks(indexed: Indexed) -> None:
    chunks = await _chunks(indexed.graph, "berg-long")
    assert len(chunks) > WHOLE_PAGE_CHUNKS
    assert "Tromso" in (chunks[-1].content or "")
    ctx = await abuild_context(
        QUESTION, [Result(chunks[0], 1.0, {})], budget=200, format="evidence", counter=REGEX, graph_store=indexed.graph
    )
    assert "Tromso" not in ctx.text  # the cost of evidence stays that of the chunks returned


async def test_a_page_outside_the_filter_is_not_read(indexed: Indexed) -> None:
    chunks = await _chunks(indexed.graph, "berg")
    ctx = await abuild_context(
        QUESTION,
        [Result(chunks[0], 1.0, {})],
        budget=200,
        format="evidence",
        counter=REGEX,
        graph_store=indexed.graph,
        filter={"title": "Someone else"},
    )
    assert "Tromso" not in ctx.text


async def test_chunks_a_store_does_not_hold_change_nothing(indexed: Indexed) -> None:
    # A host's own chunk ids (not <page>#<n>) and a page the store does not know.
    hosted = Document("x-1", LEAD, {"parent_id": "x", "chunk_index": 1, "title": "Anna Berg"})
    unknown = Document("nowhere#0", LEAD, {"parent_id": "nowhere", "chunk_index": 0, "title": "Anna Berg"})
    for doc in (hosted, unknown):
        results = [Result(doc, 1.0, {})]
        with_store = await abuild_context(
            QUESTION, results, budget=200, format="evidence", counter=REGEX, graph_store=indexed.graph
        )
        without = await abuild_context(QUESTION, results, budget=200, format="evidence", counter=REGEX)
        assert with_store.text == without.text
