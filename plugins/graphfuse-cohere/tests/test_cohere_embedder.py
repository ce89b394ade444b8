"""CohereEmbedder: the real ``cohere`` SDK against a local server speaking ``/v2/embed``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from cohere_fake_api import API_KEY, FAST_RETRY, CohereServer, fake_vector, retry_waits
from graphfuse_cohere import CohereEmbedder

import graphfuse
from graphfuse import AuthenticationFailed, ConnectionFailed, DeadlineExceeded, InvalidInput
from graphfuse.plugins import get_registry
from graphfuse.testing import EmbedderContract


@pytest.fixture
async def embedder(cohere_server: CohereServer) -> AsyncIterator[CohereEmbedder]:
    async with CohereEmbedder(api_key=API_KEY, base_url=cohere_server.url, retry=FAST_RETRY) as e:
        yield e


class TestCohereEmbedderContract(EmbedderContract):  # type: ignore[misc]
    pass


async def test_documents_and_queries_use_their_input_types(
    embedder: CohereEmbedder, cohere_server: CohereServer
) -> None:
    vectors = await embedder.embed_documents(["alpha", "beta"])
    query = await embedder.embed_query("gamma")
    assert vectors == [fake_vector(t, "search_document", 1024) for t in ("alpha", "beta")]
    assert query == fake_vector("gamma", "search_query", 1024)
    first, second = cohere_server.bodies("/v2/embed")
    assert (first["model"], first["input_type"], first["texts"]) == (
        "embed-english-v3.0",
        "search_document",
        ["alpha", "beta"],
    )
    assert first["embedding_types"] == ["float"]
    assert "output_dimension" not in first
    assert (second["input_type"], second["texts"]) == ("search_query", ["gamma"])


async def test_batches_split_at_the_limit(embedder: CohereEmbedder, cohere_server: CohereServer) -> None:
    texts = [f"text {i}" for i in range(200)]
    vectors = await embedder.embed_documents(texts)
    assert [len(b["texts"]) for b in cohere_server.bodies("/v2/embed")] == [96, 96, 8]
    assert vectors == [fake_vector(t, "search_document", 1024) for t in texts]


async def test_smaller_batch_size(cohere_server: CohereServer) -> None:
    async with CohereEmbedder(api_key=API_KEY, base_url=cohere_server.url, batch_size=2) as e:
        await e.embed_documents(["a", "b", "c"])
    assert [len(b["texts"]) for b in cohere_server.bodies("/v2/embed")] == [2, 1]


async def test_flexible_model_requests_its_output_dimension(cohere_server: CohereServer) -> None:
    async with CohereEmbedder("embed-v4.0", api_key=API_KEY, base_url=cohere_server.url, dimension=256) as e:
        assert e.dimension == 256
        [vector] = await e.embed_documents(["x"])
    assert len(vector) == 256
    assert cohere_server.bodies("/v2/embed")[0]["output_dimension"] == 256


async def test_rate_limited_then_success_waits_retry_after(
    embedder: CohereEmbedder, cohere_server: CohereServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphfuse.retry")
    cohere_server.faults = [(429, {"Retry-After": "0.2"})]
    assert await embedder.embed_query("q") == fake_vector("q", "search_query", 1024)
    assert len(cohere_server.requests) == 2
    assert retry_waits(caplog) == [pytest.approx(0.2)]


async def test_unauthorized_is_not_retried(cohere_server: CohereServer) -> None:
    async with CohereEmbedder(api_key="wrong", base_url=cohere_server.url, retry=FAST_RETRY) as e:
        with pytest.raises(AuthenticationFailed, match="Cohere answered HTTP 401"):
            await e.embed_documents(["x"])
    assert len(cohere_server.requests) == 1


async def test_server_errors_exhaust_the_attempts(embedder: CohereEmbedder, cohere_server: CohereServer) -> None:
    cohere_server.faults = [(500, {})] * 5
    with pytest.raises(ConnectionFailed, match="HTTP 500"):
        await embedder.embed_documents(["x"])
    assert len(cohere_server.requests) == FAST_RETRY.attempts


async def test_bad_request_is_invalid_input(embedder: CohereEmbedder, cohere_server: CohereServer) -> None:
    cohere_server.faults = [(400, {})]
    with pytest.raises(InvalidInput, match="HTTP 400"):
        await embedder.embed_documents(["x"])
    assert len(cohere_server.requests) == 1


async def test_slow_response_hits_the_deadline(embedder: CohereEmbedder, cohere_server: CohereServer) -> None:
    cohere_server.faults = [(None, 30.0)]
    with graphfuse.deadline(0.5), pytest.raises(DeadlineExceeded):
        await embedder.embed_documents(["x"])
    assert len(cohere_server.requests) == 1


async def test_slow_responses_hit_the_provider_timeout(cohere_server: CohereServer) -> None:
    cohere_server.faults = [(None, 30.0)] * 3
    async with CohereEmbedder(api_key=API_KEY, base_url=cohere_server.url, timeout=0.2, retry=FAST_RETRY) as e:
        with pytest.raises(ConnectionFailed, match="did not answer"):
            await e.embed_documents(["x"])
    assert len(cohere_server.requests) == 3


async def test_wrong_number_of_embeddings_is_invalid_input(
    embedder: CohereEmbedder, cohere_server: CohereServer
) -> None:
    cohere_server.short_by = 1
    with pytest.raises(InvalidInput, match="Cohere returned 1 embeddings for 2 texts"):
        await embedder.embed_documents(["a", "b"])


@pytest.mark.parametrize(
    ("embeddings", "message"),
    [
        ({"float": [[0.5] * 1023]}, "a 1023-dimensional embedding, expected 1024"),
        ({"int8": [[1] * 1024]}, "no float embeddings"),
    ],
)
async def test_malformed_embeddings_are_invalid_input(
    embedder: CohereEmbedder, cohere_server: CohereServer, embeddings: dict[str, object], message: str
) -> None:
    cohere_server.faults = [(200, {"id": "e", "embeddings": embeddings})]
    with pytest.raises(InvalidInput, match=message):
        await embedder.embed_query("x")


async def test_api_key_from_the_environment(cohere_server: CohereServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COHERE_API_KEY", raising=False)
    monkeypatch.setenv("CO_API_KEY", API_KEY)
    async with CohereEmbedder(base_url=cohere_server.url) as e:
        assert len(await e.embed_query("x")) == 1024


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COHERE_API_KEY", raising=False)
    monkeypatch.delenv("CO_API_KEY", raising=False)
    with pytest.raises(AuthenticationFailed, match="COHERE_API_KEY"):
        CohereEmbedder()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 97},
        {"batch_size": 0},
        {"dimension": 512},
        {"model": "embed-v4.0", "dimension": 100},
        {"model": "my-custom-model"},
        {"model": ""},
        {"timeout": 0},
        {"retry": 3},
    ],
)
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        CohereEmbedder(api_key=API_KEY, **kwargs)  # type: ignore[arg-type]


def test_unknown_model_with_a_declared_dimension() -> None:
    assert CohereEmbedder("my-custom-model", api_key=API_KEY, dimension=64).dimension == 64


def test_registered_as_a_plugin() -> None:
    embedder = get_registry().create("embedder", "cohere", api_key=API_KEY, model="embed-english-light-v3.0")
    assert isinstance(embedder, CohereEmbedder)
    assert embedder.dimension == 384
