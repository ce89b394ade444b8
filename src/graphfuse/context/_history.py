"""Conversation history in a context: the last turns, newest first into their share, shown oldest first."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from .._core._errors import InvalidInput
from .._core._sentences import cut_to
from ._counters import TokenCounter

__all__ = [
    "HISTORY_HEADING",
    "HISTORY_ROLES",
    "HISTORY_TURNS",
    "RETRIEVED_HEADING",
    "HistoryLike",
    "PackedHistory",
    "Role",
    "Turn",
    "history_block",
    "history_turns",
    "int_budget_history_room",
    "pack_history",
]

Role = Literal["user", "assistant", "system"]
"""Who spoke a turn (one of :data:`HISTORY_ROLES`)."""
HISTORY_ROLES: tuple[Role, ...] = ("user", "assistant", "system")
"""The roles a conversation turn may have."""
HISTORY_TURNS = 5
"""At most this many of the last turns go into a context (the source document's builder takes the last five)."""
HISTORY_HEADING = "## Conversation History"
"""The heading of the history block in :attr:`Context.prompt_text <graphfuse.context.Context.prompt_text>`."""
RETRIEVED_HEADING = "## Retrieved Information"
"""The heading after the history block, before the retrieved context."""
_ELLIPSIS = "\u2026"


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a conversation: ``role`` (``"user"``, ``"assistant"`` or ``"system"``) and its text.

    A plain mapping ``{"role": ..., "content": ...}`` is accepted wherever a turn is; bad values
    raise :class:`~graphfuse.InvalidInput` naming the field.
    """

    role: Role
    content: str

    def __post_init__(self) -> None:
        _check_turn(self.role, self.content, "turn")

    def to_dict(self) -> dict[str, str]:
        """``{"role", "content"}``."""
        return {"role": self.role, "content": self.content}


HistoryLike: TypeAlias = Sequence[Turn | Mapping[str, Any]]
"""A conversation, oldest turn first: :class:`Turn` objects or ``{"role", "content"}`` mappings."""


def _check_turn(role: object, content: object, where: str) -> None:
    if not isinstance(role, str) or role not in HISTORY_ROLES:
        raise InvalidInput(f"{where}.role must be one of {', '.join(map(repr, HISTORY_ROLES))}, got {role!r}")
    if not isinstance(content, str):
        raise InvalidInput(f"{where}.content must be a string, got {type(content).__name__}")


def history_turns(history: object, *, name: str = "history") -> tuple[Turn, ...]:
    """``history`` as turns, oldest first: ``None`` is none; else a sequence (a list, a tuple) of
    :class:`Turn` or ``{"role", "content"}`` mappings (no other keys).

    Anything else raises :class:`~graphfuse.InvalidInput` naming the field (``history[2].role``),
    with ``name`` as the field's name.
    """
    if history is None:
        return ()
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        raise InvalidInput(
            f"{name} must be a list of turns ({{'role', 'content'}} mappings or graphfuse.context.Turn), "
            f"got {type(history).__name__}"
        )
    out: list[Turn] = []
    for i, turn in enumerate(history):
        where = f"{name}[{i}]"
        if isinstance(turn, Turn):
            out.append(turn)
            continue
        if not isinstance(turn, Mapping):
            raise InvalidInput(
                f"{where} must be a {{'role', 'content'}} mapping or a graphfuse.context.Turn, "
                f"got {type(turn).__name__}"
            )
        keys = set(turn)
        if keys != {"role", "content"}:
            missing, extra = {"role", "content"} - keys, keys - {"role", "content"}
            said = f"lacks {', '.join(sorted(missing))}" if missing else f"has unknown keys {sorted(map(str, extra))}"
            raise InvalidInput(f"{where} {said}: a turn is {{'role', 'content'}}")
        role, content = turn["role"], turn["content"]
        _check_turn(role, content, where)
        out.append(Turn(cast(Role, role), content))
    return tuple(out)


def _line(turn: Turn) -> str:
    return f"{turn.role.capitalize()}: {turn.content.strip()}"


def history_block(turns: Sequence[Turn]) -> str:
    """The text the turns add before a context: the history heading, one ``Role: content`` line
    per turn in the order given (oldest first), then the heading of the retrieved context.
    ``""`` for no turns."""
    if not turns:
        return ""
    lines = "\n".join(_line(t) for t in turns)
    return f"{HISTORY_HEADING}\n{lines}\n\n{RETRIEVED_HEADING}\n"


@dataclass(frozen=True, slots=True)
class PackedHistory:
    """The turns kept (oldest first; the newest cut when it alone did not fit), their block's
    tokens, and how many of the given turns were left out."""

    turns: tuple[Turn, ...]
    tokens: int
    dropped: int
    cut: bool


def pack_history(turns: Sequence[Turn], counter: TokenCounter, room: int) -> PackedHistory:
    """The last :data:`HISTORY_TURNS` turns, newest first, while their :func:`history_block` fits
    ``room`` tokens by ``counter``; the older ones are dropped (the history stays one unbroken
    stretch of the conversation: a turn that does not fit ends it). When not even the newest
    turn fits whole, it is cut at a word boundary (ending in an ellipsis) to fit, or dropped when
    not a word of it fits."""
    recent = list(turns[-HISTORY_TURNS:])
    kept: list[Turn] = []
    tokens = 0
    for turn in reversed(recent):
        trial = [turn, *kept]
        n = counter.count(history_block(trial))
        if n > room:
            break
        kept, tokens = trial, n
    cut = False
    if not kept and recent and room > 0:
        newest = recent[-1]

        def fits(text: str) -> bool:
            return counter.count(history_block([Turn(newest.role, text)])) <= room

        # (Only a head that could fit is searched: a token is rarely longer than 16 characters, and
        # a shorter head only makes the cut shorter, never over the room.)
        head = newest.content.strip()[: max(1024, room * 16)]
        short = cut_to(head, fits, ellipsis=_ELLIPSIS)
        if short and short != _ELLIPSIS:
            kept, cut = [Turn(newest.role, short)], True
            tokens = counter.count(history_block(kept))
    return PackedHistory(tuple(kept), tokens, len(turns) - len(kept), cut)


def int_budget_history_room(budget: int, wanted: int, *, share: float = 0.15, cap: int = 500) -> int:
    """The tokens conversation history may take of an int ``budget``: what it needs (``wanted``),
    at most ``share`` of the budget and at most ``cap`` (the rule of :class:`TokenBudget`)."""
    return min(wanted, cap, math.floor(budget * share))
