"""CohereReranker: the real ``cohere`` SDK against a local server speaking ``/v2/rerank``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from cohere_fake_api import API_KEY, FAST_RETRY, CohereServer, overlap, retry_waits
from graphfuse_cohere import CohereReranker

import graphfuse
from graphfuse import AuthenticationFailed, ConnectionFailed, DeadlineExceeded, InvalidInput
from graphfuse.plugins import get_registry
from graphfuse.testing import RerankerContract

QUERY = "capital of France"
DOCUMENTS = ["bananas are yellow", "Paris is the capital of France", "France is in Europe"]


@pytest.fixture
async def reranker(cohere_server: CohereServer) -> AsyncIterator[CohereReranker]:
    async with CohereReranker(api_key=API_KEY, base_url=cohere_server.url, retry=FAST_RETRY) as r:
        yield r


class TestCohereRerankerContract(RerankerContract):  # type: ignore[misc]
    pass


async def test_scores_map_back_to_input_order(reranker: CohereReranker, cohere_server: CohereServer) -> None:
    scores = await reranker.rerank(QUERY, DOCUMENTS)
    assert scores == [overlap(QUERY, d) for d in DOCUMENTS]
    [body] = cohere_server.bodies("/v2/rerank")
    assert (body["model"], body["query"], body["documents"]) == ("rerank-english-v3.0", QUERY, DOCUMENTS)


async def test_batches_split_at_batch_size(cohere_server: CohereServer) -> None:
    documents = [*DOCUMENTS, "capital cities", "France"]
    async with CohereReranker(api_key=API_KEY, base_url=cohere_server.url, batch_size=2) as r:
        scores = await r.rerank(QUERY, documents)
    assert scores == [overlap(QUERY, d) for d in documents]
    assert [len(b["documents"]) for b in cohere_server.bodies("/v2/rerank")] == [2, 2, 1]


async def test_no_documents_makes_no_request(reranker: CohereReranker, cohere_server: CohereServer) -> None:
    assert await reranker.rerank(QUERY, []) == []
    assert cohere_server.requests == []


async def test_rate_limited_then_success_waits_retry_after(
    reranker: CohereReranker, cohere_server: CohereServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphfuse.retry")
    cohere_server.faults = [(429, {"Retry-After": "0.15"})]
    assert len(await reranker.rerank(QUERY, DOCUMENTS)) == 3
    assert len(cohere_server.requests) == 2
    assert retry_waits(caplog) == [pytest.approx(0.15)]


async def test_unauthorized_is_not_retried(cohere_server: CohereServer) -> None:
    async with CohereReranker(api_key="wrong", base_url=cohere_server.url, retry=FAST_RETRY) as r:
        with pytest.raises(AuthenticationFailed):
            await r.rerank(QUERY, DOCUMENTS)
    assert len(cohere_server.requests) == 1


async def test_server_errors_exhaust_the_attempts(reranker: CohereReranker, cohere_server: CohereServer) -> None:
    cohere_server.faults = [(503, {})] * 5
    with pytest.raises(ConnectionFailed, match="HTTP 503"):
        await reranker.rerank(QUERY, DOCUMENTS)
    assert len(cohere_server.requests) == FAST_RETRY.attempts


async def test_slow_response_hits_the_deadline(reranker: CohereReranker, cohere_server: CohereServer) -> None:
    cohere_server.faults = [(None, 30.0)]
    with graphfuse.deadline(0.5), pytest.raises(DeadlineExceeded):
        await reranker.rerank(QUERY, DOCUMENTS)
    assert len(cohere_server.requests) == 1


async def test_missing_scores_are_invalid_input(reranker: CohereReranker, cohere_server: CohereServer) -> None:
    cohere_server.short_by = 1
    with pytest.raises(InvalidInput, match="Cohere returned 2 scores for 3 documents"):
        await reranker.rerank(QUERY, DOCUMENTS)


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ([(0, 0.5), (0, 0.4), (1, 0.3)], "repeated index 0"),
        ([(0, 0.5), (1, 0.4), (7, 0.3)], "bad or repeated index 7"),
        ([(0, 1.5), (1, 0.4), (2, 0.3)], "score 1.5, outside"),
        ([(0, 0.5), (1, 0.4), (2, 0.3), (2, 0.1)], "repeated index 2"),
    ],
)
async def test_malformed_scores_are_invalid_input(
    reranker: CohereReranker, cohere_server: CohereServer, results: list[tuple[int, float]], message: str
) -> None:
    body = {"id": "r", "results": [{"index": i, "relevance_score": s} for i, s in results]}
    cohere_server.faults = [(200, body)]
    with pytest.raises(InvalidInput, match=message):
        await reranker.rerank(QUERY, DOCUMENTS)


@pytest.mark.parametrize("kwargs", [{"batch_size": 1001}, {"model": ""}, {"timeout": -1}])
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        CohereReranker(api_key=API_KEY, **kwargs)  # type: ignore[arg-type]


def test_registered_as_a_plugin() -> None:
    reranker = get_registry().create("reranker", "cohere", api_key=API_KEY, model="rerank-v3.5")
    assert isinstance(reranker, CohereReranker)
    assert reranker.model == "rerank-v3.5"
