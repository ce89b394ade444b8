"""VoyageEmbedder: the real ``voyageai`` SDK against a local server speaking ``/v1/embeddings``."""

from __future__ import annotations

import logging

import pytest
from graphfuse_voyage import VoyageEmbedder
from voyage_fake_api import API_KEY, FAST_RETRY, VoyageServer, chosen_waits, error, fake_vector

import graphfuse
from graphfuse import AuthenticationFailed, ConnectionFailed, DeadlineExceeded, InvalidInput
from graphfuse.plugins import get_registry
from graphfuse.testing import EmbedderContract

EMBED = "/v1/embeddings"


@pytest.fixture
def embedder(voyage_server: VoyageServer) -> VoyageEmbedder:
    return VoyageEmbedder(api_key=API_KEY, base_url=voyage_server.url, retry=FAST_RETRY)


class TestVoyageEmbedderContract(EmbedderContract):  # type: ignore[misc]
    pass


async def test_documents_and_queries_use_their_input_types(
    embedder: VoyageEmbedder, voyage_server: VoyageServer
) -> None:
    assert await embedder.embed_documents(["alpha", "beta"]) == [
        fake_vector("alpha", "document", 1024),
        fake_vector("beta", "document", 1024),
    ]
    assert await embedder.embed_query("gamma") == fake_vector("gamma", "query", 1024)
    first, second = voyage_server.bodies[EMBED]
    assert (first["model"], first["input_type"], first["input"]) == ("voyage-3", "document", ["alpha", "beta"])
    assert first["output_dimension"] is None
    assert (second["input_type"], second["input"]) == ("query", ["gamma"])


async def test_batches_split_at_batch_size(voyage_server: VoyageServer) -> None:
    embedder = VoyageEmbedder("voyage-3-lite", api_key=API_KEY, base_url=voyage_server.url, batch_size=128)
    texts = [f"text {i}" for i in range(300)]
    vectors = await embedder.embed_documents(texts)
    assert [len(b["input"]) for b in voyage_server.bodies[EMBED]] == [128, 128, 44]
    assert vectors == [fake_vector(t, "document", 512) for t in texts]


async def test_output_dimension_is_requested(voyage_server: VoyageServer) -> None:
    embedder = VoyageEmbedder("voyage-3.5", api_key=API_KEY, base_url=voyage_server.url, output_dimension=256)
    assert embedder.dimension == 256
    assert len(await embedder.embed_query("x")) == 256
    assert voyage_server.bodies[EMBED][0]["output_dimension"] == 256


async def test_rate_limited_then_success_waits_retry_after(
    embedder: VoyageEmbedder, voyage_server: VoyageServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphfuse.retry")
    voyage_server.script = [error(429, {"Retry-After": "0.2"})]
    assert await embedder.embed_query("q") == fake_vector("q", "query", 1024)
    assert voyage_server.request_count == 2
    assert chosen_waits(caplog) == [pytest.approx(0.2)]


async def test_unauthorized_is_not_retried(voyage_server: VoyageServer) -> None:
    embedder = VoyageEmbedder(api_key="wrong", base_url=voyage_server.url, retry=FAST_RETRY)
    with pytest.raises(AuthenticationFailed, match="Voyage AI answered HTTP 401"):
        await embedder.embed_documents(["x"])
    assert voyage_server.request_count == 1


@pytest.mark.parametrize("status", [500, 502])
async def test_server_errors_exhaust_the_attempts(
    embedder: VoyageEmbedder, voyage_server: VoyageServer, status: int
) -> None:
    voyage_server.script = [error(status) for _ in range(5)]
    with pytest.raises(ConnectionFailed, match=f"HTTP {status}"):
        await embedder.embed_documents(["x"])
    assert voyage_server.request_count == FAST_RETRY.attempts


async def test_unprocessable_request_is_invalid_input(embedder: VoyageEmbedder, voyage_server: VoyageServer) -> None:
    voyage_server.script = [error(422)]
    with pytest.raises(InvalidInput, match="HTTP 422"):
        await embedder.embed_documents(["x"])
    assert voyage_server.request_count == 1


async def test_slow_response_hits_the_deadline(embedder: VoyageEmbedder, voyage_server: VoyageServer) -> None:
    voyage_server.script = [30.0]
    with graphfuse.deadline(0.5), pytest.raises(DeadlineExceeded):
        await embedder.embed_documents(["x"])
    assert voyage_server.request_count == 1


async def test_slow_responses_hit_the_provider_timeout(voyage_server: VoyageServer) -> None:
    voyage_server.script = [30.0, 30.0, 30.0]
    embedder = VoyageEmbedder(api_key=API_KEY, base_url=voyage_server.url, timeout=0.2, retry=FAST_RETRY)
    with pytest.raises(ConnectionFailed, match="Voyage AI"):
        await embedder.embed_documents(["x"])
    assert voyage_server.request_count == 3


async def test_wrong_number_of_embeddings_is_invalid_input(
    embedder: VoyageEmbedder, voyage_server: VoyageServer
) -> None:
    voyage_server.missing = 1
    with pytest.raises(InvalidInput, match="Voyage AI returned 2 embeddings for 3 texts"):
        await embedder.embed_documents(["a", "b", "c"])


async def test_api_key_from_the_environment(voyage_server: VoyageServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOYAGE_API_KEY", API_KEY)
    assert len(await VoyageEmbedder(base_url=voyage_server.url).embed_query("x")) == 1024


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    with pytest.raises(AuthenticationFailed, match="VOYAGE_API_KEY"):
        VoyageEmbedder()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 1001},
        {"batch_size": True},
        {"output_dimension": 512},
        {"model": "voyage-3.5", "output_dimension": 300},
        {"model": "voyage-next"},
        {"timeout": float("nan")},
        {"retry": None},
    ],
)
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        VoyageEmbedder(api_key=API_KEY, **kwargs)  # type: ignore[arg-type]


def test_registered_as_a_plugin() -> None:
    embedder = get_registry().create("embedder", "voyage", api_key=API_KEY, model="voyage-3-lite")
    assert isinstance(embedder, VoyageEmbedder)
    assert embedder.dimension == 512
