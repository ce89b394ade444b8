"""A stage's GraphFuse error reaches a LangChain caller as its own class and as ``StageFailed``."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from langchain_graphfuse import GraphFuseRetriever

from graphfuse import (
    AuthenticationFailed,
    Candidate,
    ConnectionFailed,
    GraphFuseError,
    Pipeline,
    Query,
    RateLimited,
    RunContext,
    StageFailed,
)


class Failing:
    name = "rerank"

    def __init__(self, error: GraphFuseError) -> None:
        self.error = error

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        raise self.error


@pytest.mark.parametrize(
    "error",
    [RateLimited("429", retry_after=4.0), ConnectionFailed("down"), AuthenticationFailed("bad key")],
    ids=lambda e: type(e).__name__,
)
async def test_the_retriever_raises_the_stage_error_by_its_class(error: GraphFuseError) -> None:
    retriever = GraphFuseRetriever(pipeline=Pipeline([Failing(error)]), k=3)
    with pytest.raises(type(error)) as caught:
        retriever.invoke("q")
    assert isinstance(caught.value, StageFailed)
    assert caught.value.stage == "rerank"
    with pytest.raises(type(error)) as caught:
        await retriever.ainvoke("q")
    assert isinstance(caught.value, StageFailed)
    assert caught.value.retryable is error.retryable
    if isinstance(error, RateLimited):
        assert caught.value.retry_after == 4.0  # type: ignore[attr-defined]
