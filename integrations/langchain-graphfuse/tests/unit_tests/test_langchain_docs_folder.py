"""A docs folder with a huge page through a LangChain chain with the usual ``format_docs``.

With default settings a multihop GraphFuseRetriever returns passages of at most the indexer's
chunk size, so the prompt's context stays within ``k x chunk size`` tokens (before, the
release-notes page came back whole: a 212,408-token prompt on the FastAPI docs).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from langchain_core.documents import Document as LCDocument
from langchain_core.runnables import RunnableLambda
from langchain_graphfuse import GraphFuseRetriever, source_records

from graphfuse import presets, run_sync
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, RegexTokenizer, TitleLinker, TokenChunker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

CHUNK = 256  # the indexer's default chunk size


def format_docs(docs: Sequence[LCDocument]) -> str:
    return "\n\n".join(doc.page_content for doc in docs)


def _loaded(folder: Path) -> list[LCDocument]:
    # What a directory loader gives: one document per file, its path under "source".
    notes = "\n\n".join(
        f"## Release 0.{i}.0\n\n* Changed the default response class handling in routers, fix {i}." for i in range(2000)
    )
    pages = {
        "release-notes.md": f"# Release notes\n\n{notes}\n",
        "background-tasks.md": "# Background tasks\n\nPass a function to BackgroundTasks.add_task; it runs after "
        "the response is sent.\n",
        "responses.md": "# Custom responses\n\nSet default_response_class on the app to change the default "
        "response class.\n",
    }
    docs = []
    for name, text in pages.items():
        (folder / name).write_text(text, encoding="utf-8")
        title = text[2:].split("\n")[0]
        docs.append(LCDocument(page_content=text, metadata={"source": str(folder / name), "title": title}))
    return docs


def test_format_docs_over_multihop_passages_stays_within_k_chunks(tmp_path: Path) -> None:
    records = source_records(_loaded(tmp_path))
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=256)
    run_sync(Indexer(graph, vectors, embedder, chunker=TokenChunker(CHUNK), extractors=[TitleLinker()]).aindex(records))
    retriever = GraphFuseRetriever(pipeline=presets.multihop(graph, vectors, embedder))
    chain = retriever | RunnableLambda(format_docs)
    tokens = RegexTokenizer()
    for question in ("Which release changed the default response class?", "How do I run a background task?"):
        context = chain.invoke(question)
        assert context
        assert len(tokens.spans(context)) <= retriever.k * CHUNK, question
    whole = retriever.invoke("Which release changed the default response class?")
    assert all(len(tokens.spans(d.page_content)) <= CHUNK for d in whole)
