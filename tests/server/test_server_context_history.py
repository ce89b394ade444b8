"""/v1/context with a conversation history: packed into its share, validated at the door."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from _server_world import served

from graphfuse.context import get_token_counter

PROBLEM = "application/problem+json"


async def test_context_with_history(tmp_path: Path) -> None:
    history = [
        {"role": "system", "content": "Answer briefly."},
        *[
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn{i} about the apple orchard"}
            for i in range(7)
        ],
    ]
    async with served(tmp_path) as w:
        body = {"query": "apple orchard", "budget": 400, "preset": "minimal", "top_k": 3, "history": history}
        r = await w.client.post("/v1/context", json=body, headers=w.auth("acme"))
        assert r.status_code == 200, r.text
        data = r.json()
        assert [t["content"].split()[0] for t in data["history"]] == [f"turn{i}" for i in range(2, 7)]
        assert data["history_dropped"] == 3
        assert 0 < data["history_tokens"] <= 60  # min(500, 15 % of 400)
        assert data["budget"] == 400 - data["history_tokens"]
        assert data["tokens"] <= data["budget"]
        prompt = data["prompt_text"]
        assert prompt.startswith("## Conversation History\nUser: turn2 about the apple orchard\n")
        assert prompt.endswith(data["text"])
        assert "acme/" not in prompt
        assert data["sources"]
        assert get_token_counter().count(prompt) <= 400
        # Without history the response is as before.
        del body["history"]
        plain = (await w.client.post("/v1/context", json=body, headers=w.auth("acme"))).json()
        assert "history" not in plain
        assert "prompt_text" not in plain


# The documented bounds (docs/server.md): at most 50 turns of at most 8,000 characters.
MAX_HISTORY_TURNS, MAX_TURN_CHARS = 50, 8000


@pytest.mark.parametrize(
    ("history", "field"),
    [
        ([{"role": "bot", "content": "hi"}], "history[0].role"),
        ([{"role": "user", "content": "hi"}, {"role": "user"}], "history[1].content"),
        ([{"role": "user", "content": 3}], "history[0].content"),
        ([{"role": "user", "content": "x" * (MAX_TURN_CHARS + 1)}], "history[0].content"),
        ([{"role": "user", "content": "hi", "name": "ann"}], "history[0].name"),
        ([{"role": "user", "content": "hi"}] * (MAX_HISTORY_TURNS + 1), "history"),
        ("hello", "history"),
    ],
)
async def test_bad_history_is_422_naming_the_field(tmp_path: Path, history: Any, field: str) -> None:
    async with served(tmp_path, corpus=False) as w:
        r = await w.client.post("/v1/context", json={"query": "apple", "history": history}, headers=w.auth("acme"))
        assert r.status_code == 422, r.text
        assert r.headers["content-type"] == PROBLEM
        assert r.json()["field"] == field


async def test_history_at_the_bounds_is_accepted(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        # The most turns, and the longest turn (both at once would pass the request body limit).
        for history in (
            [{"role": "user", "content": "hi"}] * MAX_HISTORY_TURNS,
            [{"role": "user", "content": "x" * MAX_TURN_CHARS}],
        ):
            body = {"query": "apple", "history": history}
            r = await w.client.post("/v1/context", json=body, headers=w.auth("acme"))
            assert r.status_code == 200, r.text
