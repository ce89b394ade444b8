"""A local stand-in for the Voyage AI API (``/v1/embeddings``, ``/v1/rerank``) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import random
import re
import struct
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from graphfuse.retry import RetryPolicy

API_KEY = "test-voyage-key"
FAST_RETRY = RetryPolicy(attempts=3, initial=0.01, maximum=1.0, jitter=0.0)
DIMENSIONS = {"voyage-3": 1024, "voyage-3-lite": 512, "voyage-3.5": 1024}


def fake_vector(text: str, input_type: str, dimension: int) -> list[float]:
    """A deterministic pseudo-embedding, rounded to float32 as Voyage's base64 encoding is."""
    rng = random.Random(hashlib.sha256(f"{input_type}|{text}".encode()).digest())
    values = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    return list(struct.unpack(f"<{dimension}f", struct.pack(f"<{dimension}f", *values)))


def relevance(query: str, document: str) -> float:
    """Jaccard similarity of the word sets: a relevance in [0, 1]."""
    a, b = set(re.findall(r"\w+", query.lower())), set(re.findall(r"\w+", document.lower()))
    return len(a & b) / len(a | b) if a | b else 0.0


@dataclass
class VoyageServer:
    """Records each request body by path; plays ``script`` (one entry per request) first.

    A script entry is an ``aiohttp`` response to send instead of the real answer, or a number
    of seconds to stall before answering. ``missing`` leaves that many items out of answers.
    """

    url: str = ""
    bodies: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {"/v1/embeddings": [], "/v1/rerank": []})
    script: list[web.Response | float] = field(default_factory=list)
    missing: int = 0
    unblock: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def request_count(self) -> int:
        return sum(len(b) for b in self.bodies.values())

    async def answer(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies[request.path].append(body)
        if request.headers.get("Authorization") != f"Bearer {API_KEY}":
            return web.json_response({"detail": "Provided API key is invalid."}, status=401)
        step = self.script.pop(0) if self.script else None
        if isinstance(step, web.Response):
            return step
        if step is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.unblock.wait(), step)
        return self.embeddings(body) if request.path == "/v1/embeddings" else self.rerank(body)

    def embeddings(self, body: dict[str, Any]) -> web.Response:
        dimension = body["output_dimension"] or DIMENSIONS[body["model"]]
        data = []
        for index, text in enumerate(body["input"][self.missing :]):
            vector = fake_vector(text, body["input_type"], dimension)
            encoded = base64.b64encode(struct.pack(f"<{dimension}f", *vector)).decode()
            data.append({"object": "embedding", "embedding": encoded, "index": index})
        assert body["encoding_format"] == "base64"
        return web.json_response({"object": "list", "data": data, "model": body["model"], "usage": {"total_tokens": 1}})

    def rerank(self, body: dict[str, Any]) -> web.Response:
        ranked = sorted(
            ({"index": i, "relevance_score": relevance(body["query"], d)} for i, d in enumerate(body["documents"])),
            key=lambda item: -item["relevance_score"],
        )
        data = ranked[self.missing :]
        return web.json_response({"object": "list", "data": data, "model": body["model"], "usage": {"total_tokens": 1}})


def error(status: int, headers: dict[str, str] | None = None) -> web.Response:
    """A Voyage-style error answer to put in a script."""
    return web.json_response({"detail": f"scripted {status}"}, status=status, headers=headers)


def chosen_waits(caplog: pytest.LogCaptureFixture) -> list[float]:
    """The waits graphfuse.retry chose, from its log records."""
    return [r.__dict__["graphfuse_wait"] for r in caplog.records if r.name == "graphfuse.retry"]
