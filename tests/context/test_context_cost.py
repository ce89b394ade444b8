"""What a context costs follows its budget: only the sentences that can still win are embedded,
each once per embedder (by the hash of its text); the bi-encoder reranker remembers documents too."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from graphfuse import Document, PluginError, Result
from graphfuse.context import RegexTokenCounter, abuild_context
from graphfuse.context._preselect import pool_size
from graphfuse.defaults import MIN_POOL
from graphfuse.embedders import HashingEmbedder
from graphfuse.embedders._memo import VectorMemo, memo_for
from graphfuse.rerankers import EmbeddingReranker

QUESTION = "Which prize did Anna Berg win for her harbour film?"


class Counting(HashingEmbedder):
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__(64)
        self.documents: list[str] = []
        self.queries: list[str] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return await super().embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return await super().embed_query(text)


def _long_page(sentences: int) -> str:
    filler = [f"Section {i} of the guide describes setting number {i} of the harbour tool." for i in range(sentences)]
    return " ".join(["Anna Berg won the Golden Lion for Quiet Harbour.", *filler])


def _results(*texts: str) -> list[Result]:
    return [Result(Document(f"d{i}", t, {"title": f"Page {i}"}), 1.0 - i / 10, {}) for i, t in enumerate(texts)]


@pytest.mark.slow
async def test_a_long_page_costs_the_budget_not_its_length() -> None:
    counter = RegexTokenCounter()
    e = Counting()
    results = _results(_long_page(3000), _long_page(2000))
    total = 3001 + 2001  # sentences: the answer and the filler of each page
    ctx = await abuild_context(QUESTION, results, budget=200, format="evidence", counter=counter, embedder=e)
    assert "Golden Lion" in ctx.text
    assert ctx.tokens <= 200
    embedded = len(e.documents)
    assert 0 < embedded < total / 20  # a few hundred of 5,000 sentences
    assert sum(counter.count(t) for t in e.documents) <= pool_size(200) + 257
    # A larger budget may embed more, never all.
    e2 = Counting()
    await abuild_context(QUESTION, results, budget=4000, format="evidence", counter=counter, embedder=e2)
    assert embedded < len(e2.documents) < total


async def test_passages_shown_whole_embed_nothing() -> None:
    e = Counting()
    short = _results("Anna Berg won the Golden Lion.", "Quiet Harbour is a film by Anna Berg.")
    ctx = await abuild_context(QUESTION, short, budget=500, counter=RegexTokenCounter(), embedder=e)
    assert len(ctx.sources) == 2
    assert not any(s.shortened for s in ctx.sources)
    assert e.documents == []
    assert e.queries == []
    # A page that must be cut: only its sentences are embedded, a few of them.
    results = _results("Anna Berg won the Golden Lion.", _long_page(3000))
    ctx = await abuild_context(QUESTION, results, budget=120, counter=RegexTokenCounter(), embedder=e)
    assert [s.shortened for s in ctx.sources] == [False, True]
    assert 0 < len(e.documents) < 100
    assert "Anna Berg won the Golden Lion." not in e.documents[1:]


async def test_sentences_are_embedded_once_per_embedder() -> None:
    e = Counting()
    results = _results(_long_page(40), "Quiet Harbour is a 1961 drama film directed by Anna Berg.")
    first = await abuild_context(QUESTION, results, budget=150, format="evidence", embedder=e)
    seen = len(e.documents)
    assert seen > 0
    # The same texts in new objects (a page loaded again): nothing embedded again, same context.
    again = _results(*("".join(list(r.document.content or "")) for r in results))
    second = await abuild_context(QUESTION, again, budget=150, format="evidence", embedder=e)
    assert len(e.documents) == seen
    assert second.text == first.text
    # Another embedder has vectors of its own.
    other = Counting()
    await abuild_context(QUESTION, results, budget=150, format="evidence", embedder=other)
    assert len(other.documents) == seen


async def test_the_memo_is_bounded_and_checks_vectors() -> None:
    e = Counting()
    memo = VectorMemo(e, max_vectors=3)
    await memo.embed_documents(["a", "b", "c", "d"])
    assert len(memo) == 3
    await memo.embed_documents(["d", "c", "b"])  # still held
    assert e.documents == ["a", "b", "c", "d"]
    await memo.embed_documents(["a"])  # evicted first: embedded again
    assert e.documents[-1] == "a"
    assert len(memo) == 3

    class Short(HashingEmbedder):
        async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
            return (await super().embed_documents(texts))[:-1]

    short = Short(8)
    with pytest.raises(PluginError, match="Short returned vectors of the wrong shape"):
        await VectorMemo(short).embed_documents(["x", "y"])
    assert memo_for(e) is memo_for(e)
    assert memo_for(e) is not memo_for(Counting())


async def test_the_reranker_embeds_a_document_once() -> None:
    e = Counting()
    reranker = EmbeddingReranker(e)
    page = _long_page(200)
    first = await reranker.rerank("golden lion", [page, "Another page."])
    assert len(e.documents) == 2
    second = await reranker.rerank("golden lion", ["".join(list(page)), "Another page."])
    assert second == first
    assert len(e.documents) == 2
    assert e.queries == ["golden lion"]
    await reranker.rerank("harbour tool", [page])
    assert len(e.documents) == 2
    assert e.queries[-1] == "harbour tool"


def test_pool_follows_the_budget() -> None:
    assert pool_size(10) == MIN_POOL
    assert pool_size(4000) > pool_size(1000) > MIN_POOL
