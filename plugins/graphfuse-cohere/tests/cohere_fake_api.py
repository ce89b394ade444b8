"""A local stand-in for the Cohere API (``/v2/embed``, ``/v2/rerank``) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from graphfuse.retry import RetryPolicy

API_KEY = "test-cohere-key"
FAST_RETRY = RetryPolicy(attempts=3, initial=0.01, maximum=1.0, jitter=0.0)
DIMENSIONS = {"embed-english-v3.0": 1024, "embed-english-light-v3.0": 384, "embed-v4.0": 1536}


def fake_vector(text: str, input_type: str, dimension: int) -> list[float]:
    """A deterministic pseudo-embedding: the same text and input type give the same vector."""
    seed = int.from_bytes(hashlib.sha256(f"{input_type}:{text}".encode()).digest()[:8], "big")
    rng = random.Random(seed)
    return [rng.uniform(-1.0, 1.0) for _ in range(dimension)]


def overlap(query: str, document: str) -> float:
    """The share of the query's words found in the document: a relevance in [0, 1]."""
    words = set(re.findall(r"\w+", query.lower()))
    return len(words & set(re.findall(r"\w+", document.lower()))) / len(words) if words else 0.0


@dataclass
class CohereServer:
    """Records every request; answers the scripted ``faults`` first, then normally.

    A fault is ``(status, headers)`` (an error answer), ``(200, body)`` (this JSON body instead
    of the real answer) or ``(None, seconds)`` (answer late).
    ``short_by`` drops that many items from each successful answer.
    """

    url: str = ""
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    faults: list[tuple[int | None, Any]] = field(default_factory=list)
    short_by: int = 0
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def bodies(self, path: str) -> list[dict[str, Any]]:
        return [body for p, body in self.requests if p == path]

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append((request.path, body))
        if request.headers.get("Authorization") != f"Bearer {API_KEY}":
            return web.json_response({"message": "invalid api token"}, status=401)
        if self.faults:
            status, extra = self.faults.pop(0)
            if status == 200:
                return web.json_response(extra)
            if status is not None:
                return web.json_response({"message": f"scripted {status}"}, status=status, headers=extra)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.release.wait(), extra)
        if request.path == "/v2/embed":
            return self.embed(body)
        return self.rerank(body)

    def embed(self, body: dict[str, Any]) -> web.Response:
        dimension = body.get("output_dimension") or DIMENSIONS[body["model"]]
        texts = body["texts"][: len(body["texts"]) - self.short_by]
        vectors = [fake_vector(t, body["input_type"], dimension) for t in texts]
        return web.json_response(
            {"id": "e1", "response_type": "embeddings_by_type", "embeddings": {"float": vectors}, "texts": texts}
        )

    def rerank(self, body: dict[str, Any]) -> web.Response:
        scored = [(i, overlap(body["query"], d)) for i, d in enumerate(body["documents"])]
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        results = [{"index": i, "relevance_score": s} for i, s in scored[: len(scored) - self.short_by]]
        return web.json_response({"id": "r1", "results": results, "meta": {"api_version": {"version": "2"}}})


def retry_waits(caplog: pytest.LogCaptureFixture) -> list[float]:
    """The waits graphfuse.retry chose, from its log records."""
    return [r.__dict__["graphfuse_wait"] for r in caplog.records if r.name == "graphfuse.retry"]
