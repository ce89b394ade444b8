"""Counting prompt tokens when a provider does not report usage, and sizing chat prompts."""

from __future__ import annotations

import re
from typing import Protocol

__all__ = ["Counter", "count_messages", "default_counter"]

# OpenAI's chat format adds a few tokens per message and for the reply's priming.
_PER_MESSAGE = 4
_PER_REPLY = 3


class Counter(Protocol):
    """The token counter interface (``graphfuse.context.TokenCounter``): ``name`` and ``count``."""

    name: str

    def count(self, text: str) -> int: ...


class _ApproximateCounter:
    # Interim, until graphfuse.context (the context lane) is on main: words and punctuation marks.
    name = "approximate (words and punctuation)"
    _PIECES = re.compile(r"\w+|[^\w\s]", re.UNICODE)

    def count(self, text: str) -> int:
        return len(self._PIECES.findall(text))


def default_counter() -> Counter:
    """The default token counter of :mod:`graphfuse.context` (``get_token_counter()``)."""
    try:
        from ..context import get_token_counter
    except ImportError:
        return _ApproximateCounter()
    counter: Counter = get_token_counter()
    return counter


def count_messages(messages: list[dict[str, str]], counter: Counter) -> int:
    """The prompt tokens of chat ``messages``: their contents plus the chat format's overhead."""
    return sum(counter.count(m["content"]) + _PER_MESSAGE for m in messages) + _PER_REPLY
