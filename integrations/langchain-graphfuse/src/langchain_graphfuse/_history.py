"""A LangChain conversation as GraphFuse history turns: messages, ``(role, text)`` pairs, role dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
)

from graphfuse import InvalidInput
from graphfuse.context import Turn

__all__ = ["history_from_messages"]

_CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "system": "system"}


def _turn(message: BaseMessage, where: str) -> Turn:
    if isinstance(message, HumanMessage):
        role = "user"
    elif isinstance(message, AIMessage):
        role = "assistant"
    elif isinstance(message, SystemMessage):
        role = "system"
    elif isinstance(message, ChatMessage) and message.role in _CHAT_ROLES:
        role = _CHAT_ROLES[message.role]
    else:
        raise InvalidInput(
            f"{where} is a {type(message).__name__}: the history takes human (user), ai (assistant) and system "
            "turns; leave tool and function messages out"
        )
    # (``text`` is a str property from langchain-core 1.0, a method before.)
    text = message.text
    return Turn(role, str(text if isinstance(text, str) else text()))  # type: ignore[arg-type]


def history_from_messages(history: object, *, name: str = "history") -> tuple[Turn, ...]:
    """The turns of a LangChain conversation, oldest first: ``BaseMessage`` objects (``HumanMessage``,
    ``AIMessage``, ``SystemMessage``, a ``ChatMessage`` with one of those roles), anything
    ``convert_to_messages`` reads (``("human", "text")``, ``{"role": "user", "content": ...}``)
    and :class:`graphfuse.context.Turn`. A message's text is its text content blocks.

    Anything else (a tool message, a bare string, an unknown role) raises
    :class:`~graphfuse.InvalidInput` naming the item (``history[2]``)."""
    if history is None:
        return ()
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        raise InvalidInput(
            f"{name} must be a list of messages (BaseMessage, (role, text), {{'role', 'content'}}), "
            f"got {type(history).__name__}"
        )
    out: list[Turn] = []
    for i, item in enumerate(history):
        where = f"{name}[{i}]"
        if isinstance(item, Turn):
            out.append(item)
            continue
        if isinstance(item, (str, bytes)):
            raise InvalidInput(f"{where} is a bare string: give the role, ('human', text) or a HumanMessage")
        if not isinstance(item, BaseMessage):
            try:
                (item,) = convert_to_messages([item])  # type: ignore[list-item]
            except (ValueError, TypeError, KeyError, NotImplementedError) as exc:
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise InvalidInput(f"{where} is not a chat message: {reason}") from None
        out.append(_turn(item, where))
    return tuple(out)
