"""VoyageReranker: the real ``voyageai`` SDK against a local server speaking ``/v1/rerank``."""

from __future__ import annotations

import logging

import pytest
from graphfuse_voyage import VoyageReranker
from voyage_fake_api import API_KEY, FAST_RETRY, VoyageServer, chosen_waits, error, relevance

import graphfuse
from graphfuse import AuthenticationFailed, ConnectionFailed, DeadlineExceeded, InvalidInput
from graphfuse.plugins import get_registry
from graphfuse.testing import RerankerContract

RERANK = "/v1/rerank"
QUERY = "capital of France"
DOCUMENTS = ["bananas are yellow", "Paris is the capital of France", "France is in Europe"]


@pytest.fixture
def reranker(voyage_server: VoyageServer) -> VoyageReranker:
    return VoyageReranker(api_key=API_KEY, base_url=voyage_server.url, retry=FAST_RETRY)


class TestVoyageRerankerContract(RerankerContract):  # type: ignore[misc]
    pass


async def test_scores_map_back_to_input_order(reranker: VoyageReranker, voyage_server: VoyageServer) -> None:
    assert await reranker.rerank(QUERY, DOCUMENTS) == [relevance(QUERY, d) for d in DOCUMENTS]
    [body] = voyage_server.bodies[RERANK]
    assert (body["model"], body["query"], body["documents"]) == ("rerank-2", QUERY, DOCUMENTS)


async def test_batches_split_at_batch_size(voyage_server: VoyageServer) -> None:
    documents = [*DOCUMENTS, "capital cities", "France"]
    reranker = VoyageReranker(api_key=API_KEY, base_url=voyage_server.url, batch_size=2)
    assert await reranker.rerank(QUERY, documents) == [relevance(QUERY, d) for d in documents]
    assert [len(b["documents"]) for b in voyage_server.bodies[RERANK]] == [2, 2, 1]


async def test_no_documents_makes_no_request(reranker: VoyageReranker, voyage_server: VoyageServer) -> None:
    assert await reranker.rerank(QUERY, []) == []
    assert voyage_server.request_count == 0


async def test_rate_limited_then_success_waits_retry_after(
    reranker: VoyageReranker, voyage_server: VoyageServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphfuse.retry")
    voyage_server.script = [error(429, {"Retry-After": "0.15"})]
    assert len(await reranker.rerank(QUERY, DOCUMENTS)) == 3
    assert voyage_server.request_count == 2
    assert chosen_waits(caplog) == [pytest.approx(0.15)]


async def test_unauthorized_is_not_retried(voyage_server: VoyageServer) -> None:
    reranker = VoyageReranker(api_key="wrong", base_url=voyage_server.url, retry=FAST_RETRY)
    with pytest.raises(AuthenticationFailed):
        await reranker.rerank(QUERY, DOCUMENTS)
    assert voyage_server.request_count == 1


async def test_server_errors_exhaust_the_attempts(reranker: VoyageReranker, voyage_server: VoyageServer) -> None:
    voyage_server.script = [error(503) for _ in range(5)]
    with pytest.raises(ConnectionFailed, match="HTTP 503"):
        await reranker.rerank(QUERY, DOCUMENTS)
    assert voyage_server.request_count == FAST_RETRY.attempts


async def test_slow_response_hits_the_deadline(reranker: VoyageReranker, voyage_server: VoyageServer) -> None:
    voyage_server.script = [30.0]
    with graphfuse.deadline(0.5), pytest.raises(DeadlineExceeded):
        await reranker.rerank(QUERY, DOCUMENTS)
    assert voyage_server.request_count == 1


async def test_missing_scores_are_invalid_input(reranker: VoyageReranker, voyage_server: VoyageServer) -> None:
    voyage_server.missing = 1
    with pytest.raises(InvalidInput, match="Voyage AI returned 2 scores for 3 documents"):
        await reranker.rerank(QUERY, DOCUMENTS)


@pytest.mark.parametrize("kwargs", [{"batch_size": 0}, {"model": None}, {"timeout": "5"}])
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        VoyageReranker(api_key=API_KEY, **kwargs)  # type: ignore[arg-type]


def test_registered_as_a_plugin() -> None:
    reranker = get_registry().create("reranker", "voyage", api_key=API_KEY, model="rerank-2-lite")
    assert isinstance(reranker, VoyageReranker)
    assert reranker.model == "rerank-2-lite"
