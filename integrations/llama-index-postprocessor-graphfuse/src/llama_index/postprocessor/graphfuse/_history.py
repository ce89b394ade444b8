"""A LlamaIndex conversation as GraphFuse history turns: ``ChatMessage`` objects and role dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.llms import ChatMessage

from graphfuse import InvalidInput
from graphfuse.context import Turn, history_turns

__all__ = ["history_from_chat"]

# LlamaIndex's MessageRole values: "chatbot" (Cohere) and "model" (Gemini) are the assistant under
# other providers' names, "developer" (OpenAI) the system prompt's.
_ROLES = {
    "user": "user",
    "assistant": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
}


def history_from_chat(history: object, *, name: str = "history") -> tuple[Turn, ...]:
    """The turns of a LlamaIndex conversation, oldest first: ``ChatMessage`` objects (what a chat
    memory's ``get()`` returns), ``{"role", "content"}`` dicts and :class:`graphfuse.context.Turn`.

    A message's text is its text blocks. A tool or function message, or another role, raises
    :class:`~graphfuse.InvalidInput` naming the item (``history[2]``)."""
    if history is None:
        return ()
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        raise InvalidInput(
            f"{name} must be a list of ChatMessage objects or {{'role', 'content'}} dicts, got {type(history).__name__}"
        )
    items: list[Any] = []
    for i, item in enumerate(history):
        if isinstance(item, ChatMessage):
            role = _ROLES.get(str(getattr(item.role, "value", item.role)))
            if role is None:
                raise InvalidInput(
                    f"{name}[{i}] is a {item.role.value!r} message: the history takes user, assistant and system "
                    "turns; leave tool and function messages out"
                )
            items.append(Turn(role, item.content or ""))  # type: ignore[arg-type]
        else:
            items.append(item)
    return history_turns(items, name=name)
