"""Counting prompt tokens when a provider does not report usage, and sizing chat prompts."""

from __future__ import annotations

from ..context import TokenCounter, get_token_counter

__all__ = ["count_messages", "default_counter"]

# OpenAI's chat format adds a few tokens per message and for the reply's priming.
_PER_MESSAGE = 4
_PER_REPLY = 3


def default_counter() -> TokenCounter:
    """The default token counter of :mod:`graphfuse.context` (``cl100k_base`` offline, else ``regex``)."""
    return get_token_counter()


def count_messages(messages: list[dict[str, str]], counter: TokenCounter) -> int:
    """The prompt tokens of chat ``messages``: their contents plus the chat format's overhead."""
    return sum(counter.count(m["content"]) + _PER_MESSAGE for m in messages) + _PER_REPLY
