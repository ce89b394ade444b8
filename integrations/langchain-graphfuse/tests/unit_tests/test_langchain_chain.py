"""Full LangChain chains with the GraphFuse runnables; the compressor; the LangChain-side adapters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_graphfuse import (
    GraphFuseCompressor,
    GraphFuseRetriever,
    LangChainEmbedder,
    LangChainSearch,
    LangChainVectorStore,
    PageRankRunnable,
    TemporalDecayRunnable,
    WeightedFusion,
)

from graphfuse import InvalidInput, Pipeline, VectorRecord
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import GraphExpansion, Hydrate, SemanticSearch
from graphfuse.stages import PageRank as CorePageRank
from graphfuse.stages import TemporalDecay as CoreTemporalDecay


def format_docs(docs: Sequence[Document]) -> str:
    return "\n".join(f"[{d.id}] {d.page_content}" for d in docs)


def test_chain_retriever_stages_fusion_prompt_model(backend: Any, clock: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=5)
    ranked = (
        retriever
        | TemporalDecayRunnable(clock=clock)
        | PageRankRunnable(backend.graph_store)
        | WeightedFusion({"semantic": 0.5, "graph": 0.2, "temporal": 0.2, "pagerank": 0.1}, top_n=3)
    )
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    seen: list[str] = []

    def record(value: Any) -> Any:
        seen.append(value.to_string())
        return value

    model = FakeListChatModel(responses=["Babbage designed it."])
    chain = (
        {"context": ranked | format_docs, "question": RunnableLambda(lambda q: q)}
        | prompt
        | RunnableLambda(record)
        | model
        | StrOutputParser()
    )
    assert chain.invoke("who designed the Analytical Engine?") == "Babbage designed it."
    assert "Question: who designed the Analytical Engine?" in seen[0]
    docs = ranked.invoke("who designed the Analytical Engine?")
    assert len(docs) == 3
    ns = docs[0].metadata["graphfuse"]
    assert set(ns["signals"]) >= {"semantic", "graph", "temporal", "pagerank"} or set(ns["signals"]) >= {
        "graph",
        "temporal",
        "pagerank",
    }
    assert [d.metadata["graphfuse"]["score"] for d in docs] == sorted(
        (d.metadata["graphfuse"]["score"] for d in docs), reverse=True
    )
    assert f"[{docs[0].id}]" in seen[0]


async def test_chain_abatch_twenty_queries(backend: Any, clock: Any) -> None:
    retriever = GraphFuseRetriever(pipeline=backend.pipeline(), k=4)
    ranked = (
        retriever | TemporalDecayRunnable(clock=clock) | PageRankRunnable(backend.graph_store) | WeightedFusion(top_n=2)
    )
    model = FakeListChatModel(responses=[f"answer {i}" for i in range(20)])
    chain = ranked | RunnableLambda(format_docs) | model | StrOutputParser()
    queries = [f"Analytical Engine and punched cards, variant {i}" for i in range(20)]
    answers = await chain.abatch(queries, config={"max_concurrency": 5})
    assert len(answers) == 20
    assert all(a.startswith("answer ") for a in answers)
    docs = await ranked.abatch(queries, config={"max_concurrency": 5})
    assert [d[0].metadata["graphfuse"]["query"] for d in docs] == queries


def test_compressor_in_contextual_compression_retriever(backend: Any, clock: Any) -> None:
    base = GraphFuseRetriever(pipeline=backend.pipeline(), k=6)
    compressor = GraphFuseCompressor(
        CoreTemporalDecay(clock=clock),
        CorePageRank(backend.graph_store),
        scorer=WeightedScorer({"semantic": 0.4, "temporal": 0.6}),
        top_n=2,
    )
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)
    docs = retriever.invoke("Analytical Engine punched cards")
    assert len(docs) == 2
    for d in docs:
        ns = d.metadata["graphfuse"]
        assert ns["score"] == pytest.approx(0.4 * ns["signals"].get("semantic", 0) + 0.6 * ns["signals"]["temporal"])
        assert "pagerank" in ns["signals"]


async def test_compressor_async_and_edge_cases(backend: Any, clock: Any) -> None:
    compressor = GraphFuseCompressor(stages=[CoreTemporalDecay(clock=clock)], top_n=1)
    docs = [Document(id="a", page_content="a"), Document(id="b", page_content="b", metadata={"created_at": 0})]
    out = await compressor.acompress_documents(docs, "q")
    assert [d.id for d in out] == ["a"]
    assert await compressor.acompress_documents([], "q") == []
    assert compressor.compress_documents(docs, "q")[0].id == "a"
    with pytest.raises(InvalidInput, match="not both"):
        GraphFuseCompressor(CoreTemporalDecay(), stages=[])
    with pytest.raises(ValueError, match="top_n"):  # pydantic wraps InvalidInput in a ValidationError
        GraphFuseCompressor(CoreTemporalDecay(), top_n=0)


async def test_langchain_embedder_and_vector_store_inside_graphfuse(backend: Any, corpus_texts: dict[str, str]) -> None:
    embeddings = DeterministicFakeEmbedding(size=32)
    embedder = LangChainEmbedder(embeddings)
    assert embedder.dimension == 32
    assert len(await embedder.embed_documents(["a", "b"])) == 2
    assert await embedder.embed_documents([]) == []
    lc_store = InMemoryVectorStore(embeddings)
    texts = corpus_texts
    await lc_store.aadd_documents(
        [
            Document(id=i, page_content=t, metadata={"tenant": "globex" if i == "secret" else "acme"})
            for i, t in texts.items()
        ]
    )
    store = LangChainVectorStore(lc_store)
    assert await store.count() == len(texts)
    pipeline = Pipeline([SemanticSearch(store, embedder, limit=3), Hydrate(backend.graph_store)])
    # DeterministicFakeEmbedding hashes the text: the exact text is the nearest vector.
    results = await pipeline.aretrieve(texts["turing"], top_k=3)
    assert results[0].id == "turing"
    assert results[0].signals["semantic"] == pytest.approx(1.0)
    filtered = await pipeline.aretrieve(texts["turing"], top_k=8, filter={"tenant": "globex"})
    assert [r.id for r in filtered] == ["secret"]
    strict = Pipeline([SemanticSearch(LangChainVectorStore(lc_store, filter_format="none"), embedder)])
    with pytest.raises(Exception, match="filter_format='none'"):
        await strict.aretrieve("x", filter={"tenant": "acme"})
    with pytest.raises(InvalidInput, match="raw vectors"):
        await store.upsert([VectorRecord("x", [0.0] * 32)])
    assert await store.delete(["turing", "nope"]) == 1
    assert await store.count() == len(texts) - 1


def test_adapters_refuse_bad_input() -> None:
    with pytest.raises(InvalidInput, match="Embeddings"):
        LangChainEmbedder("not embeddings")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="dimension"):
        LangChainEmbedder(DeterministicFakeEmbedding(size=4), dimension=0)
    with pytest.raises(InvalidInput, match="VectorStore"):
        LangChainVectorStore(object())  # type: ignore[arg-type]


async def test_embedder_checks_vectors() -> None:
    embedder = LangChainEmbedder(DeterministicFakeEmbedding(size=8), dimension=16)
    with pytest.raises(InvalidInput, match="dimension 8, expected 16"):
        await embedder.embed_query("x")


async def test_langchain_search_stage_feeds_graph_stages(backend: Any, corpus_texts: dict[str, str]) -> None:
    embeddings = DeterministicFakeEmbedding(size=32)
    lc_store = InMemoryVectorStore(embeddings)
    await lc_store.aadd_documents(
        [
            Document(
                id=i,
                page_content=t,
                metadata={"tenant": "globex" if i == "secret" else "acme", "created_at": "2025-12-01T00:00:00Z"},
            )
            for i, t in corpus_texts.items()
        ]
    )
    with pytest.raises(Exception, match="no relevance function"):
        await Pipeline([LangChainSearch(lc_store)]).aretrieve("x")
    search = LangChainSearch(lc_store, limit=2, relevance=lambda s: s)
    pipeline = Pipeline([search, GraphExpansion(backend.graph_store, depth=1)], WeightedScorer({"semantic": 1.0}))
    results = await pipeline.aretrieve(corpus_texts["turing"], top_k=5)
    assert results[0].id == "turing"
    assert results[0].document.content == corpus_texts["turing"]
    assert results[0].document.created_at is not None
    assert "hopper" in {r.id for r in results}  # reached through the graph from the LangChain hit
    scoped = await pipeline.aretrieve(corpus_texts["turing"], top_k=5, filter={"tenant": "globex"})
    assert [r.id for r in scoped] == ["secret"]
    one = await pipeline.aretrieve(corpus_texts["turing"], options={"semantic": {"limit": 1}}, top_k=1)
    assert one[0].id == "turing"
    with pytest.raises(InvalidInput, match="limit"):
        LangChainSearch(lc_store, limit=0)
