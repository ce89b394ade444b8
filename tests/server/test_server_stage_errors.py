"""A provider failure inside a stage gets the server's answer for that failure, not a bare 500.

A stage's failure is also its cause's class (``StageFailed[RateLimited]``): the server answers a
rate-limited reranker with 503 and the provider's Retry-After, an unreachable one with 503, and
keeps 500 for bad data or a missing record a stage met (the server's fault, not the request's).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from _server_world import served

from graphfuse import ConnectionFailed, GraphFuseError, InvalidInput, NotFound, RateLimited


class FailingReranker:
    def __init__(self, error: GraphFuseError) -> None:
        self.error = error

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        raise self.error


@pytest.mark.parametrize(
    ("error", "status", "retry_after"),
    [
        (RateLimited("429 from the provider", retry_after=12.0), 503, "12"),
        (ConnectionFailed("provider unreachable"), 503, None),
        (InvalidInput("provider returned 3 scores for 2 documents"), 500, None),
        (NotFound("no such model"), 500, None),
    ],
    ids=["rate-limited", "connection", "invalid-data", "not-found"],
)
async def test_a_stage_failure_is_answered_by_its_cause(
    tmp_path: Path, error: GraphFuseError, status: int, retry_after: str | None
) -> None:
    async with served(tmp_path) as w:
        w.service.reranker = FailingReranker(error)
        r = await w.client.post(
            "/v1/retrieve", json={"query": "apple orchard", "preset": "standard"}, headers=w.auth("acme")
        )
    assert r.status_code == status, r.text
    assert r.headers.get("Retry-After") == retry_after
    assert str(error) not in r.text  # the provider's words go to the log only
