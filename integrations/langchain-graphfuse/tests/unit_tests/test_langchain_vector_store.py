"""GraphFuseVectorStore: the graph built as documents arrive, the preset behind the retriever, clean documents."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_graphfuse import GraphFuseEmbeddings, GraphFuseVectorStore

from graphfuse import InvalidInput, run_sync
from graphfuse.embedders import HashingEmbedder

# What a directory loader gives (markdown files with links and headings), plus titled and untitled notes.
DOCS = [
    Document(
        page_content="# Deploying\n\nRun the service behind the [Edge Proxy](proxy.md). Ask Maria Lopez.",
        metadata={"source": "docs/deploy.md"},
    ),
    Document(
        page_content="# Edge Proxy\n\nThe Edge Proxy retries twice. Maria Lopez wrote it in Berlin.",
        metadata={"source": "docs/proxy.md"},
    ),
    Document(
        id="atlas",
        page_content="Atlas Maps serves tiles. Project Falcon uses Atlas Maps and the Edge Proxy.",
        metadata={"title": "Atlas Maps"},
    ),
    Document(
        id="falcon",
        page_content="Project Falcon rewrites routing in Berlin with Maria Lopez.",
        metadata={"title": "Project Falcon", "team": "maps"},
    ),
    Document(id="notes", page_content="Berlin office notes: the Atlas Maps outage on Monday."),
]
UNTITLED = [
    Document(id=f"u{i}", page_content=text)
    for i, text in enumerate(
        [
            "Maria Lopez met Ahmed Khan in Berlin to plan the Orion launch.",
            "The Orion launch slipped because Vega Labs delayed the engines.",
            "Ahmed Khan runs Vega Labs from Lisbon.",
            "Lisbon hosts the Orion ground station.",
            "Maria Lopez leads the Berlin team.",
        ]
    )
]
QUESTIONS = ["who wrote the proxy?", "Which maps does Project Falcon use?", "Berlin", "Orion engines delay"]


def embeddings() -> GraphFuseEmbeddings:
    return GraphFuseEmbeddings(HashingEmbedder(dimension=64))


async def _all(graph: Any) -> AsyncIterator[Any]:
    async for doc in graph.iter_documents():
        yield doc


def _graph_state(store: GraphFuseVectorStore) -> tuple[dict[str, Any], list[Any]]:
    async def read() -> tuple[dict[str, Any], list[Any]]:
        docs = {d.id: (d.content, d.metadata, d.created_at) async for d in _all(store._graph)}
        ids, matrix = await store._graph.adjacency()
        coo = matrix.tocoo()
        edges = sorted((ids[r], ids[c], float(v)) for r, c, v in zip(coo.row, coo.col, coo.data, strict=True))
        return docs, edges

    return run_sync(read())


@pytest.mark.parametrize("corpus", [DOCS, UNTITLED], ids=["titled-markdown", "entity-graph"])
def test_one_batch_or_many_give_the_same_graph_and_results(corpus: list[Document]) -> None:
    one = GraphFuseVectorStore.from_documents(corpus, embeddings())
    many = GraphFuseVectorStore(embeddings())
    for start in range(0, len(corpus), 2):
        many.add_documents(corpus[start : start + 2])
    assert _graph_state(one) == _graph_state(many)
    assert _graph_state(one)[1], "the corpus has relations"
    for question in QUESTIONS:
        a, b = one.similarity_search_with_score(question, k=5), many.similarity_search_with_score(question, k=5)
        assert [d for d, _ in a] == [d for d, _ in b]
        # The same sums, added in another order (the stores' insertion order): equal to the last bits.
        assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-12)


def test_a_later_document_links_an_earlier_one() -> None:
    # deploy.md links proxy.md, which arrives later: the link is there once it does.
    store = GraphFuseVectorStore.from_documents(DOCS[:1], embeddings())
    assert _graph_state(store)[1] == []
    store.add_documents(DOCS[1:2])
    assert ("docs/deploy.md", "docs/proxy.md") in {(a, b) for a, b, _ in _graph_state(store)[1]}


def test_results_are_clean_documents_named_by_their_page() -> None:
    body = " ".join(f"Section {i} covers the setting number {i} of the Zephyr cluster." for i in range(300))
    long = Document(page_content="# Guide\n\n" + body, metadata={"source": "docs/guide.md", "owner": "ops"})
    store = GraphFuseVectorStore.from_documents([*DOCS, long], embeddings())
    docs = store.similarity_search("Zephyr cluster settings", k=len(DOCS) + 1)
    guide = next(d for d in docs if d.id == "docs/guide.md")
    # A passage of the page (the indexer chunked it), with the page's id and the metadata it was
    # added with, plus the title the indexer read from the markdown heading.
    assert "Zephyr" in guide.page_content
    assert len(guide.page_content) < len(long.page_content)
    assert guide.metadata == {"source": "docs/guide.md", "owner": "ops", "title": "Guide"}
    for doc in docs:
        assert not any(k.startswith("graphfuse") or k in ("parent_id", "chunk_index") for k in doc.metadata)
    assert len({d.id for d in docs}) == len(docs)  # one passage per page
    whole = store.get_by_ids(["docs/guide.md"])[0]
    assert "Section 299" in whole.page_content
    assert whole.metadata == guide.metadata
    assert store.get_by_ids(["falcon"])[0].metadata == {"title": "Project Falcon", "team": "maps"}


def test_the_retriever_is_the_preset() -> None:
    store = GraphFuseVectorStore.from_documents(DOCS, embeddings())
    pipeline = store.pipeline()
    assert [s.name for s in pipeline.stages] == [s.name for s in run_sync(store.apipeline()).stages]
    assert {"bm25"} <= {s.name for s in pipeline.stages}  # multihop: BM25 and the graph beside the vectors
    for question in QUESTIONS:
        expected = []
        for r in pipeline.retrieve(question, top_k=3):
            parent = r.document.metadata.get("parent_id")
            expected.append(parent if isinstance(parent, str) else r.id)
        got = store.as_retriever(search_kwargs={"k": 3}).invoke(question)
        assert [d.id for d in got] == expected


def test_filters_search_kwargs_and_relevance() -> None:
    store = GraphFuseVectorStore.from_documents(DOCS, embeddings())
    assert [d.id for d in store.similarity_search("Berlin", k=5, filter={"team": "maps"})] == ["falcon"]
    scored = store.similarity_search_with_relevance_scores("Project Falcon routing", k=3)
    assert all(0.0 <= s <= 1.0 for _, s in scored)
    assert [s for _, s in scored] == sorted((s for _, s in scored), reverse=True)
    with pytest.raises(InvalidInput, match="unknown argument"):
        store.similarity_search("x", k=2, score_threshold=0.3)
    with pytest.raises(InvalidInput, match="k must be a positive integer"):
        store.similarity_search("x", k=0)


async def test_async_twins() -> None:
    store = await GraphFuseVectorStore.afrom_texts(
        ["Atlas Maps serves tiles.", "Project Falcon uses Atlas Maps."],
        embeddings(),
        metadatas=[{"title": "Atlas Maps"}, {"title": "Project Falcon"}],
        ids=["atlas", "falcon"],
    )
    assert {d.id for d in await store.asimilarity_search("what uses Atlas Maps?", k=2)} == {"atlas", "falcon"}
    assert await store.aadd_texts(["Orion launches."], ids=["orion"]) == ["orion"]
    assert [d.id for d in await store.aget_by_ids(["orion", "missing"])] == ["orion"]
    await store.adelete(["orion"])
    assert await store.aget_by_ids(["orion"]) == []
    got = await store.as_retriever(search_kwargs={"k": 1}).ainvoke("tiles")
    assert [d.id for d in got] == ["atlas"]


def test_ids_from_loader_sources_and_replacement() -> None:
    store = GraphFuseVectorStore(embeddings())
    assert store.add_documents(DOCS[:2]) == ["docs/deploy.md", "docs/proxy.md"]
    # Loading the folder again replaces the documents instead of doubling them.
    edited = Document(page_content="# Edge Proxy\n\nThe Edge Proxy retries three times.", metadata=DOCS[1].metadata)
    store.add_documents([DOCS[0], edited])
    assert [d.page_content for d in store.get_by_ids(["docs/proxy.md"])] == [edited.page_content]
    assert run_sync(store._vectors.count()) == 2
    with pytest.warns(UserWarning, match="no text"):
        assert store.add_documents([Document(page_content="  ", id="blank")]) == []
    with pytest.raises(InvalidInput, match="given twice"):
        store.add_documents([Document(page_content="a", id="x"), Document(page_content="b", id="x")])
    with pytest.raises(InvalidInput, match="one per document"):
        store.add_documents(DOCS[:2], ids=["only-one"])
    with pytest.raises(InvalidInput, match="list of document ids"):
        store.delete(None)


def test_langchain_embeddings_are_used_as_they_are(tmp_path: Path) -> None:
    class Counting(DeterministicFakeEmbedding):
        calls: ClassVar[list[int]] = []

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            self.calls.append(len(texts))
            return super().embed_documents(texts)

    fake = Counting(size=32)
    texts = [f"Note {i} about the Edge Proxy and Project Falcon number {i}." for i in range(100)]
    GraphFuseVectorStore.from_texts(texts, fake)
    assert fake.calls == [64, 36]  # embedded in batches, not one call per text


class _Counting(DeterministicFakeEmbedding):
    """LangChain's fake embeddings, counting the texts it is asked to embed."""

    embedded: list[str] = []  # noqa: RUF012 - set per instance below

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return super().embed_documents(texts)


@pytest.mark.parametrize("corpus", [DOCS, UNTITLED], ids=["titled-markdown", "entity-graph"])
def test_a_write_embeds_only_the_texts_it_brings(corpus: list[Document]) -> None:
    # Later documents change the relations (and so the records) of earlier ones: those are indexed
    # again, with the vectors already made; each text goes to the embeddings once.
    one_batch, batches = _Counting(size=32), _Counting(size=32)
    one_batch.embedded, batches.embedded = [], []
    one = GraphFuseVectorStore.from_documents(corpus, one_batch)
    many = GraphFuseVectorStore(batches)
    for start in range(0, len(corpus), 2):
        many.add_documents(corpus[start : start + 2])
    assert sorted(batches.embedded) == sorted(one_batch.embedded)
    assert _graph_state(one) == _graph_state(many)
