"""A local stand-in for OpenAI's embeddings API (``/v1/embeddings``) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from aiohttp import web

from graphfuse.retry import RetryPolicy

API_KEY = "sk-test-openai-key"
FAST_RETRY = RetryPolicy(attempts=3, initial=0.01, maximum=1.0, jitter=0.0)
NATIVE = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


def fake_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector per text (float32 values, as OpenAI's base64 encoding carries)."""
    rng = np.random.default_rng(int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little"))
    vector = rng.standard_normal(dimensions).astype(np.float32)
    vector /= np.float32(math.sqrt(float(np.dot(vector, vector))))
    return [float(x) for x in vector]


@dataclass
class OpenAIServer:
    """Counts and keeps the request bodies; the queued ``plan`` overrides answers in turn.

    ``plan`` holds ``("error", status, headers)`` or ``("stall", seconds)`` steps;
    ``extra_items`` adds (positive) or removes (negative) items from each answer.
    """

    url: str = ""
    received: list[dict[str, Any]] = field(default_factory=list)
    plan: list[tuple[Any, ...]] = field(default_factory=list)
    extra_items: int = 0
    shuffle: bool = False
    stop_stalling: asyncio.Event = field(default_factory=asyncio.Event)

    async def embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.received.append(body)
        if request.headers.get("Authorization") != f"Bearer {API_KEY}":
            problem = {
                "message": "Incorrect API key provided",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
            return web.json_response({"error": problem}, status=401)
        if self.plan:
            step = self.plan.pop(0)
            if step[0] == "error":
                problem = {"message": f"planned {step[1]}", "type": "server_error", "code": "planned"}
                return web.json_response({"error": problem}, status=step[1], headers=step[2])
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stop_stalling.wait(), step[1])
        size = body.get("dimensions") or NATIVE[body["model"]]
        texts = body["input"] + ["extra"] * self.extra_items if self.extra_items > 0 else body["input"]
        texts = texts[: len(texts) + self.extra_items] if self.extra_items < 0 else texts
        items = []
        for index, text in enumerate(texts):
            vector = fake_embedding(text, size)
            encoded: Any = vector
            if body.get("encoding_format") == "base64":
                encoded = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode()
            items.append({"object": "embedding", "index": index, "embedding": encoded})
        if self.shuffle:
            items.reverse()
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        return web.json_response({"object": "list", "data": items, "model": body["model"], "usage": usage})


def logged_waits(caplog: pytest.LogCaptureFixture) -> list[float]:
    """The waits graphfuse.retry chose, from its log records."""
    return [r.__dict__["graphfuse_wait"] for r in caplog.records if r.name == "graphfuse.retry"]
