"""OpenAIEmbedder: the real ``openai`` SDK against a local server speaking ``/v1/embeddings``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from graphfuse_openai import OpenAIEmbedder
from openai_fake_api import API_KEY, FAST_RETRY, OpenAIServer, fake_embedding, logged_waits

import graphfuse
from graphfuse import AuthenticationFailed, ConnectionFailed, DeadlineExceeded, InvalidInput
from graphfuse.plugins import get_registry
from graphfuse.testing import EmbedderContract


@pytest.fixture
async def embedder(openai_server: OpenAIServer) -> AsyncIterator[OpenAIEmbedder]:
    async with OpenAIEmbedder(api_key=API_KEY, base_url=openai_server.url, retry=FAST_RETRY) as e:
        yield e


class TestOpenAIEmbedderContract(EmbedderContract):  # type: ignore[misc]
    pass


async def test_embeddings_come_back_in_input_order(embedder: OpenAIEmbedder, openai_server: OpenAIServer) -> None:
    openai_server.shuffle = True
    assert await embedder.embed_documents(["alpha", "beta", "gamma"]) == [
        fake_embedding(t, 1536) for t in ("alpha", "beta", "gamma")
    ]
    assert await embedder.embed_query("delta") == fake_embedding("delta", 1536)
    first, second = openai_server.received
    assert (first["model"], first["input"]) == ("text-embedding-3-small", ["alpha", "beta", "gamma"])
    assert "dimensions" not in first
    assert second["input"] == ["delta"]


async def test_batches_split_at_batch_size(openai_server: OpenAIServer) -> None:
    texts = [f"text {i}" for i in range(5000)]
    async with OpenAIEmbedder(api_key=API_KEY, base_url=openai_server.url, dimensions=8) as embedder:
        vectors = await embedder.embed_documents(texts)
    assert [len(body["input"]) for body in openai_server.received] == [2048, 2048, 904]
    assert vectors == [fake_embedding(t, 8) for t in texts]


async def test_dimensions_are_requested(openai_server: OpenAIServer) -> None:
    async with OpenAIEmbedder(
        "text-embedding-3-large", dimensions=256, api_key=API_KEY, base_url=openai_server.url
    ) as e:
        assert e.dimension == 256
        assert len(await e.embed_query("x")) == 256
    assert openai_server.received[0]["dimensions"] == 256


@pytest.mark.parametrize(("headers", "wait"), [({"Retry-After": "0.2"}, 0.2), ({"retry-after-ms": "150"}, 0.15)])
async def test_rate_limited_then_success_waits_retry_after(
    embedder: OpenAIEmbedder,
    openai_server: OpenAIServer,
    caplog: pytest.LogCaptureFixture,
    headers: dict[str, str],
    wait: float,
) -> None:
    caplog.set_level(logging.WARNING, logger="graphfuse.retry")
    openai_server.plan = [("error", 429, headers)]
    assert await embedder.embed_query("q") == fake_embedding("q", 1536)
    assert len(openai_server.received) == 2
    assert logged_waits(caplog) == [pytest.approx(wait)]


async def test_unauthorized_is_not_retried(openai_server: OpenAIServer) -> None:
    async with OpenAIEmbedder(api_key="sk-wrong", base_url=openai_server.url, retry=FAST_RETRY) as e:
        with pytest.raises(AuthenticationFailed, match="OpenAI answered HTTP 401"):
            await e.embed_documents(["x"])
    assert len(openai_server.received) == 1


async def test_server_errors_exhaust_the_attempts(embedder: OpenAIEmbedder, openai_server: OpenAIServer) -> None:
    openai_server.plan = [("error", 500, {})] * 5
    with pytest.raises(ConnectionFailed, match="HTTP 500"):
        await embedder.embed_documents(["x"])
    assert len(openai_server.received) == FAST_RETRY.attempts


async def test_bad_request_is_invalid_input(embedder: OpenAIEmbedder, openai_server: OpenAIServer) -> None:
    openai_server.plan = [("error", 400, {})]
    with pytest.raises(InvalidInput, match="HTTP 400"):
        await embedder.embed_documents(["x"])
    assert len(openai_server.received) == 1


async def test_slow_response_hits_the_deadline(embedder: OpenAIEmbedder, openai_server: OpenAIServer) -> None:
    openai_server.plan = [("stall", 30.0)]
    with graphfuse.deadline(0.5), pytest.raises(DeadlineExceeded):
        await embedder.embed_documents(["x"])
    assert len(openai_server.received) == 1


async def test_slow_responses_hit_the_provider_timeout(openai_server: OpenAIServer) -> None:
    openai_server.plan = [("stall", 30.0)] * 3
    async with OpenAIEmbedder(api_key=API_KEY, base_url=openai_server.url, timeout=0.2, retry=FAST_RETRY) as e:
        with pytest.raises(ConnectionFailed, match="OpenAI"):
            await e.embed_documents(["x"])
    assert len(openai_server.received) == 3


@pytest.mark.parametrize(("extra", "got"), [(-1, 1), (1, 3), (-2, 0)])
async def test_wrong_number_of_embeddings_is_invalid_input(
    embedder: OpenAIEmbedder, openai_server: OpenAIServer, extra: int, got: int
) -> None:
    openai_server.extra_items = extra
    with pytest.raises(InvalidInput, match=f"OpenAI returned (no|{got}) embeddings for 2 texts"):
        await embedder.embed_documents(["a", "b"])


async def test_api_key_from_the_environment(openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    async with OpenAIEmbedder(base_url=openai_server.url) as e:
        assert len(await e.embed_query("x")) == 1536


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AuthenticationFailed, match="OPENAI_API_KEY"):
        OpenAIEmbedder()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 2049},
        {"dimensions": 0},
        {"dimensions": 4000},
        {"model": "text-embedding-ada-002", "dimensions": 512},
        {"model": "my-local-model"},
        {"timeout": 0},
        {"retry": {"attempts": 2}},
    ],
)
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        OpenAIEmbedder(api_key=API_KEY, **kwargs)  # type: ignore[arg-type]


def test_registered_as_a_plugin() -> None:
    embedder = get_registry().create("embedder", "openai", api_key=API_KEY, model="text-embedding-3-large")
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.dimension == 3072
