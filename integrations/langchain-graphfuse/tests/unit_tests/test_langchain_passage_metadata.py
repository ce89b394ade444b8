"""Nothing of GraphFuse's bookkeeping in the metadata a prompt or an embedder reads, on every LangChain path."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_graphfuse import (
    GraphFuseContextFormatter,
    GraphFuseEmbeddings,
    GraphFuseRetriever,
    GraphFuseVectorStore,
    TemporalDecayRunnable,
)

from graphfuse.embedders import HashingEmbedder

PAGE = "# Guide\n\n" + " ".join(f"Section {i} sets the Zephyr cluster option number {i}." for i in range(300))
DOCS = [
    Document(page_content=PAGE, metadata={"source": "docs/guide.md"}),
    Document(page_content="# Proxy\n\nThe proxy retries twice.", metadata={"source": "docs/proxy.md"}),
]
BOOKKEEPING = ("parent_id", "chunk_index")


def _store() -> GraphFuseVectorStore:
    return GraphFuseVectorStore.from_documents(DOCS, GraphFuseEmbeddings(HashingEmbedder(dimension=64)))


def test_retriever_chunks_keep_their_page_under_the_graphfuse_key() -> None:
    retriever = GraphFuseRetriever(pipeline=_store().pipeline(), k=2)
    docs = retriever.invoke("Zephyr cluster option 120")
    chunk = next(d for d in docs if d.id.startswith("docs/guide.md#"))
    assert not set(BOOKKEEPING) & set(chunk.metadata)
    assert not any(k.startswith("graphfuse_") for k in chunk.metadata)
    assert chunk.metadata["title"] == "Guide"
    assert chunk.metadata["source"] == "docs/guide.md"
    passage = chunk.metadata["graphfuse"]["passage"]
    assert passage["parent_id"] == "docs/guide.md"
    assert chunk.id == f"docs/guide.md#{passage['chunk_index']}"
    # Down a chain of runnables the chunk stays a chunk of its page, and the formatter names the page.
    chained = (retriever | TemporalDecayRunnable()).invoke("Zephyr cluster option 120")
    assert next(d for d in chained if d.id == chunk.id).metadata["graphfuse"]["passage"] == passage
    ctx = (retriever | GraphFuseContextFormatter(budget=400).with_sources()).invoke("Zephyr cluster option 120")
    assert "docs/guide.md" in [s.id for s in ctx.sources]


def test_vector_store_documents_carry_only_the_users_metadata() -> None:
    for doc in _store().as_retriever(search_kwargs={"k": 2}).invoke("Zephyr cluster option 120"):
        assert set(doc.metadata) <= {"source", "title"}, doc.metadata
