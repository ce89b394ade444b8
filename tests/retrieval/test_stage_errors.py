"""A GraphFuse error raised inside a stage keeps its class: catchable as itself and as ``StageFailed``.

Every class of the exception tree (each ``GraphFuseError`` that ``graphfuse`` exports) raised by
a stage, through the async and the sync pipeline and the hosts' seams (``run_stage``,
``run_signal_stage``); the flags a retry reads (``retryable``, ``retry_after``) survive; a 429 from
a local HTTP server speaking a provider's wire format, met by a reranker inside the rerank stage,
is caught as ``RateLimited``.
"""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest
from aiohttp import web

import graphfuse
from graphfuse import (
    Candidate,
    DeadlineExceeded,
    Document,
    GraphFuseError,
    Pipeline,
    Query,
    RateLimited,
    RunContext,
    StageFailed,
)
from graphfuse.hosts import SignalInput, run_signal_stage, run_stage
from graphfuse.retry import RetryPolicy, call_with_retry, error_for_status
from graphfuse.stages import Rerank

# Every error class of the tree (each is public in graphfuse) but the base and StageFailed itself.
ERRORS: list[type[GraphFuseError]] = [
    cls
    for name in graphfuse.__all__
    if isinstance(cls := getattr(graphfuse, name), type)
    and issubclass(cls, GraphFuseError)
    and cls not in (GraphFuseError, StageFailed)
]
# DeadlineExceeded is the caller's deadline passing: raised as itself, never wrapped.
WRAPPED = [cls for cls in ERRORS if cls is not DeadlineExceeded]


def _error(cls: type[GraphFuseError]) -> GraphFuseError:
    return cls("provider said no", retry_after=1.5) if cls is RateLimited else cls("provider said no")  # type: ignore[call-arg]


class Raises:
    name = "flaky"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        raise self.error


class RaisesSignal(Raises):
    signal = "flaky"
    signal_input = SignalInput("id")

    async def signal_values(
        self, query: Query, ids: Sequence[str], values: Sequence[Any], context: RunContext
    ) -> list[float]:
        raise self.error


def _check(failure: BaseException, cls: type[GraphFuseError], cause: GraphFuseError) -> None:
    assert isinstance(failure, StageFailed)
    assert isinstance(failure, cls)
    assert failure.stage == "flaky"
    assert failure.cause is cause
    assert failure.__cause__ is cause
    assert failure.retryable is cause.retryable
    assert str(failure) == f"stage 'flaky' failed: {cls.__name__}: provider said no"
    assert type(failure).__name__ == f"StageFailed[{cls.__name__}]"


@pytest.mark.parametrize("cls", WRAPPED, ids=lambda c: c.__name__)
async def test_async_pipeline_raises_the_stage_failure_as_the_error_class(cls: type[GraphFuseError]) -> None:
    cause = _error(cls)
    with pytest.raises(cls) as caught:
        await Pipeline([Raises(cause)]).aretrieve("q")
    _check(caught.value, cls, cause)
    with pytest.raises(StageFailed):
        await Pipeline([Raises(cause)]).aretrieve("q")


@pytest.mark.parametrize("cls", WRAPPED, ids=lambda c: c.__name__)
def test_sync_pipeline_raises_the_stage_failure_as_the_error_class(cls: type[GraphFuseError]) -> None:
    cause = _error(cls)
    with pytest.raises(cls) as caught:
        Pipeline([Raises(cause)]).retrieve("q")
    _check(caught.value, cls, cause)


@pytest.mark.parametrize("cls", WRAPPED, ids=lambda c: c.__name__)
async def test_host_seams_raise_the_stage_failure_as_the_error_class(cls: type[GraphFuseError]) -> None:
    cause = _error(cls)
    with pytest.raises(cls) as caught:
        await run_stage(Raises(cause), Query("q"), [Candidate(Document("a"))])
    _check(caught.value, cls, cause)
    with pytest.raises(cls) as caught:
        await run_signal_stage(RaisesSignal(cause), Query("q"), ["a"], ["a"])
    _check(caught.value, cls, cause)


async def test_deadline_exceeded_in_a_stage_is_raised_as_itself() -> None:
    cause = DeadlineExceeded("provider too slow")
    with pytest.raises(DeadlineExceeded) as caught:
        await Pipeline([Raises(cause)]).aretrieve("q")
    assert caught.value is cause
    assert not isinstance(caught.value, StageFailed)


@pytest.mark.parametrize("cause", [RuntimeError("bug"), KeyError("k"), GraphFuseError("generic")])
async def test_other_errors_give_a_plain_stage_failure(cause: BaseException) -> None:
    with pytest.raises(StageFailed) as caught:
        await Pipeline([Raises(cause)]).aretrieve("q")
    assert type(caught.value) is StageFailed
    assert caught.value.cause is cause
    assert caught.value.retryable is False


def test_flags_and_extra_attributes_of_the_cause_are_kept() -> None:
    limited = StageFailed("rerank", RateLimited("429", retry_after=7.0))
    assert isinstance(limited, RateLimited)
    assert limited.retryable is True
    assert limited.retry_after == 7.0

    class Quota(RateLimited):
        """A plugin's own subclass, with an attribute of its own."""

        def __init__(self, message: str, *, bucket: str) -> None:
            super().__init__(message, retry_after=None)
            self.bucket = bucket

    quota = StageFailed("rerank", Quota("quota", bucket="minute"))
    assert isinstance(quota, Quota)
    assert isinstance(quota, RateLimited)
    assert quota.bucket == "minute"  # type: ignore[attr-defined]
    assert quota.stage == "rerank"

    # One class per cause class; errors pickle (a worker process hands them back).
    assert type(StageFailed("a", RateLimited("x"))) is type(limited)
    back = pickle.loads(pickle.dumps(limited))
    assert type(back) is type(limited)
    assert (back.stage, back.retry_after, str(back)) == ("rerank", 7.0, str(limited))


async def test_a_rate_limited_stage_is_retried_by_retry_after() -> None:
    """``call_with_retry`` around a whole run retries a stage's 429 and waits what it asked."""
    attempts: list[int] = []

    class LimitedOnce:
        name = "flaky"

        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
            attempts.append(1)
            if len(attempts) == 1:
                raise RateLimited("slow down", retry_after=0.25)
            return [Candidate(Document("a"))]

    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    pipeline = Pipeline([LimitedOnce()])
    results = await call_with_retry(
        lambda: pipeline.aretrieve("q"), RetryPolicy(attempts=3), describe="retrieve", sleep=sleep
    )
    assert [r.id for r in results] == ["a"]
    assert len(attempts) == 2
    assert len(waits) == 1
    assert waits[0] >= 0.25


# ---- a provider's 429 inside the rerank stage ---------------------------------------------------


@pytest.fixture
async def limiting_server() -> AsyncIterator[str]:
    """A local HTTP server answering every rerank request with 429 and Retry-After: 3."""

    async def rerank(request: web.Request) -> web.Response:
        return web.json_response({"message": "rate limit"}, status=429, headers={"Retry-After": "3"})

    app = web.Application()
    app.router.add_post("/v1/rerank", rerank)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


class HttpReranker:
    """A reranker calling a provider's rerank endpoint over HTTP (one attempt)."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        async with httpx.AsyncClient() as client:
            response = await client.post(f"{self.url}/v1/rerank", json={"query": query, "documents": list(documents)})
        if response.status_code != 200:
            raise error_for_status(
                response.status_code, provider="fake", detail=response.text, headers=dict(response.headers)
            )
        return [float(x) for x in response.json()["scores"]]


class Emit:
    name = "emit"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return [Candidate(Document(i, content=f"text {i}")) for i in ("a", "b")]


async def test_a_providers_429_in_the_rerank_stage_is_caught_as_rate_limited(limiting_server: str) -> None:
    pipeline = Pipeline([Emit(), Rerank(HttpReranker(limiting_server))])
    with pytest.raises(RateLimited) as caught:
        await pipeline.aretrieve("q")
    assert isinstance(caught.value, StageFailed)
    assert caught.value.stage == "rerank"
    assert caught.value.retry_after == 3.0
    assert caught.value.retryable is True
    # ... and the sync form, in a worker thread (no loop of ours running there).
    with pytest.raises(RateLimited):
        await asyncio.to_thread(pipeline.retrieve, "q")
