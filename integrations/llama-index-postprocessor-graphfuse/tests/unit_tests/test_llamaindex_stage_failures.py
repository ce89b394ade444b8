"""A stage's failure in a postprocessor or a chain: catchable by its GraphFuse class and as ``StageFailed``."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    PageRankPostprocessor,
    SignalChainPostprocessor,
    StagePostprocessor,
)

from graphfuse import (
    AuthenticationFailed,
    Candidate,
    ConnectionFailed,
    GraphFuseError,
    InvalidInput,
    Query,
    RateLimited,
    RunContext,
    StageFailed,
)
from graphfuse.stores import InMemoryGraphStore


class Failing:
    name = "rerank"

    def __init__(self, error: GraphFuseError) -> None:
        self.error = error

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        raise self.error


def nodes() -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(id_=i, text=f"text {i}"), score=s) for i, s in (("a", 0.9), ("b", 0.4))]


ERRORS = [
    RateLimited("429", retry_after=4.0),
    ConnectionFailed("down"),
    AuthenticationFailed("bad key"),
    InvalidInput("bad node data"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_postprocessor_raises_the_stage_failure_of_the_error_class(error: GraphFuseError) -> None:
    post = StagePostprocessor(Failing(error))
    with pytest.raises(type(error)) as sync:
        post.postprocess_nodes(nodes(), query_str="q")
    with pytest.raises(type(error)) as caught:
        await post.apostprocess_nodes(nodes(), query_str="q")
    for failure in (sync.value, caught.value):
        assert isinstance(failure, StageFailed)
        assert failure.stage == "rerank"
        assert failure.cause is error
        assert failure.retryable is error.retryable
        assert "stage 'rerank' failed" in str(failure)
        if isinstance(error, RateLimited):
            assert failure.retry_after == 4.0  # type: ignore[attr-defined]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_signal_chain_raises_the_stage_failure_of_the_error_class(error: GraphFuseError) -> None:
    class Unreachable(InMemoryGraphStore):
        async def pagerank(self, ids: Sequence[str] | None = None) -> dict[str, float]:
            raise error

    chain = SignalChainPostprocessor([AccessPostprocessor(), PageRankPostprocessor(Unreachable())])
    with pytest.raises(StageFailed) as caught:
        await chain.apostprocess_nodes(nodes(), query_str="q")
    assert isinstance(caught.value, type(error))
    assert caught.value.stage == "pagerank"
    assert caught.value.cause is error
    with pytest.raises(type(error)) as again:
        chain.postprocess_nodes(nodes(), query_str="q")
    assert isinstance(again.value, StageFailed)
    assert again.value.stage == "pagerank"


async def test_any_other_failure_is_a_plain_stage_failure() -> None:
    class Broken:
        name = "broken"

        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
            raise RuntimeError("disk on fire")

    with pytest.raises(StageFailed, match="disk on fire") as caught:
        await StagePostprocessor(Broken()).apostprocess_nodes(nodes(), query_str="q")
    assert type(caught.value) is StageFailed
    assert caught.value.stage == "broken"
    assert not caught.value.retryable
