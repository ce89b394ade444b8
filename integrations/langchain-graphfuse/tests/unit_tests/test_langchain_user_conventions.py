"""Written as a LangChain user's code: metadata, ``search_kwargs``, units, names, embeddings, serialization."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import langchain_graphfuse
import pytest
from langchain_core.documents import Document
from langchain_core.load import dumpd
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_graphfuse import GraphFuseEmbeddings, GraphFuseRetriever, TemporalDecayRunnable

from graphfuse import InvalidInput, Pipeline, presets
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.stores import LocalStore

RECORDS = [
    SourceRecord("reactor", "Alpha reactors power the northern grid.", metadata={"topic": "energy"}),
    SourceRecord("harbour", "The harbour substation feeds the northern grid.", metadata={"topic": "grid"}),
    SourceRecord("garden", "Tomatoes grow best in a sunny garden bed.", metadata={"topic": "garden"}),
]


@pytest.fixture
async def pipeline(tmp_path: Path) -> AsyncIterator[Pipeline]:
    store = LocalStore.open(tmp_path / "store")
    embedder = HashingEmbedder(64)
    await store.ause_embedder(embedder)
    await Indexer(store.graph, store.vectors, embedder).aindex(RECORDS)
    yield presets.no_rerank(store.graph, store.vectors, embedder)
    await store.aclose()


async def test_documents_carry_one_graphfuse_key(pipeline: Pipeline) -> None:
    retriever = GraphFuseRetriever(pipeline=pipeline, k=3)
    chain = retriever | RunnableLambda(lambda docs: [sorted(d.metadata) for d in docs])
    for keys in [*chain.invoke("what powers the grid"), *(await chain.ainvoke("garden"))]:
        assert [k for k in keys if k.startswith("graphfuse")] == ["graphfuse"]
        assert "topic" in keys


async def test_search_kwargs_like_a_vector_store_retriever(pipeline: Pipeline) -> None:
    retriever = GraphFuseRetriever(pipeline=pipeline, search_kwargs={"k": 1, "filter": {"topic": "grid"}})
    docs = await retriever.ainvoke("northern grid")
    assert [d.id for d in docs] == ["harbour"]
    assert len(GraphFuseRetriever(pipeline=pipeline, search_kwargs={"k": 2}).invoke("grid")) == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"search_kwargs": {"kk": 2}}, r"search_kwargs has unknown key\(s\) \['kk'\]"),
        ({"search_kwargs": {"k": 2}, "k": 3}, r"\['k'\] given both"),
        ({"search_type": "mmr"}, r"unknown argument\(s\) \['search_type'\]"),
        ({"top_k": 3}, r"unknown argument\(s\) \['top_k'\]"),
    ],
)
def test_unknown_settings_are_refused_loudly(pipeline: Pipeline, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        GraphFuseRetriever(pipeline=pipeline, **kwargs)


def test_half_life_needs_a_unit() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    docs = [Document(id="old", page_content="x", metadata={"created_at": (now - timedelta(days=30)).isoformat()})]
    decayed = TemporalDecayRunnable(half_life_days=30, clock=lambda: now).invoke(docs)
    assert decayed[0].metadata["graphfuse"]["signals"]["temporal"] == pytest.approx(0.5)
    same = TemporalDecayRunnable(half_life=timedelta(days=30), clock=lambda: now).invoke(docs)
    assert same[0].metadata["graphfuse"]["signals"] == decayed[0].metadata["graphfuse"]["signals"]
    with pytest.raises(InvalidInput, match="a bare number has no unit, use half_life_days=30"):
        TemporalDecayRunnable(half_life=30)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="not both"):
        TemporalDecayRunnable(half_life=timedelta(days=1), half_life_days=1)


def test_runnable_names_differ_from_the_core_stages() -> None:
    import graphfuse.stages

    assert not hasattr(graphfuse.stages, "TemporalDecayRunnable")
    assert "TemporalDecay" not in langchain_graphfuse.__all__
    assert not hasattr(langchain_graphfuse, "TemporalDecay")  # no pre-release alias left
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from langchain_graphfuse import PageRankRunnable  # the new names import without a warning

        assert PageRankRunnable.__name__ == "PageRankRunnable"


async def test_graphfuse_embedder_as_langchain_embeddings() -> None:
    embeddings = GraphFuseEmbeddings(HashingEmbedder(64))
    store = InMemoryVectorStore(embedding=embeddings)
    await store.aadd_documents([Document(id=r.id, page_content=r.text) for r in RECORDS])
    assert (await store.asimilarity_search("tomatoes in the garden", k=1))[0].id == "garden"
    assert store.similarity_search("Alpha reactors", k=1)[0].id == "reactor"
    assert len(embeddings.embed_query("q")) == embeddings.dimension == 64
    assert embeddings.embed_documents([]) == []
    with pytest.raises(InvalidInput, match="graphfuse Embedder"):
        GraphFuseEmbeddings(object())  # type: ignore[arg-type]


def test_retriever_is_not_serializable_and_says_so(pipeline: Pipeline) -> None:
    retriever = GraphFuseRetriever(pipeline=pipeline)
    assert GraphFuseRetriever.is_lc_serializable() is False
    assert dumpd(retriever)["type"] == "not_implemented"
    assert "not serializable" in (GraphFuseRetriever.__doc__ or "").lower()
