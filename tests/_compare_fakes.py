"""Scripted generators and a context source for the comparison tests (real protocol implementations)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphfuse.compare import Generation


@dataclass
class ScriptedGenerator:
    """Answers by a function of the messages; counts calls and the most calls in flight."""

    reply: Callable[[list[dict[str, str]]], str]
    model: str = "scripted-model"
    context_window: int | None = None
    delay: float = 0.0
    calls: list[list[dict[str, str]]] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0

    async def agenerate(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> Generation:
        self.calls.append(messages)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            text = self.reply(messages)
        finally:
            self.in_flight -= 1
        return Generation(text, 10 * len(messages), len(text.split()), "provider", self.delay)


def last_user(messages: list[dict[str, str]]) -> str:
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def verdict(score: int, reasoning: str = "ok") -> str:
    return json.dumps(
        {
            "score": score,
            "correctness": score,
            "completeness": score,
            "clarity": 8,
            "relevance": 9,
            "reasoning": reasoning,
        }
    )


@dataclass
class FakeContext:
    text: str
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": self.tokens, "counter": "words", "sources": [], "dropped": []}


@dataclass
class ContextSource:
    """Stands in for a Pipeline's ``acontext``: a fixed context per question substring."""

    contexts: dict[str, str]
    calls: list[dict[str, Any]] = field(default_factory=list)

    def __repr__(self) -> str:
        return "ContextSource()"

    async def acontext(self, query: str, *, budget: int, format: str = "passages", top_k: int | None = None) -> Any:
        self.calls.append({"query": query, "budget": budget, "format": format, "top_k": top_k})
        text = next((t for key, t in self.contexts.items() if key in query), "")
        return FakeContext(text, len(text.split()))
