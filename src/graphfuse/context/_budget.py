"""The token budget: a model window split into reserves, history and retrieved context."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._core._errors import InvalidInput

__all__ = ["Allocation", "TokenBudget"]


def _count(value: object, what: str, *, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (1 if positive else 0):
        kind = "a positive" if positive else "a non-negative"
        raise InvalidInput(f"{what} must be {kind} integer, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Allocation:
    """How a :class:`TokenBudget` splits its window for one query (every field in tokens).

    ``window = system + response + query + history + context + margin``.
    """

    window: int
    system: int
    response: int
    query: int
    history: int
    margin: int
    context: int

    def to_dict(self) -> dict[str, int]:
        """A JSON-ready dict."""
        return {
            "window": self.window,
            "system": self.system,
            "response": self.response,
            "query": self.query,
            "history": self.history,
            "margin": self.margin,
            "context": self.context,
        }


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """A model's context window and what is reserved in it: the rest is retrieved context.

    From ``window`` the ``system`` prompt and ``response`` reserves are taken first, then the
    query (its counted tokens, or the ``query`` reserve when the text is not known). Of what
    remains, conversation history gets what it needs up to 15 % (``history_share``) and at
    most ``history_cap`` tokens; a ``margin`` share of the rest is kept free (tokenizers
    disagree by a few per cent: use it when the counter is not the model's own tokenizer);
    the retrieved context gets everything else. An int budget given to
    :func:`~graphfuse.context.retrieve_context` is the context part alone.

    A budget that leaves no room for context raises :class:`~graphfuse.InvalidInput` naming
    the numbers, when built (with the ``query`` reserve) and when allocated.
    """

    window: int
    system: int = 200
    response: int = 1200
    query: int = 100
    history: int = 0
    history_share: float = 0.15
    history_cap: int = 500
    margin: float = 0.0

    def __post_init__(self) -> None:
        _count(self.window, "budget window", positive=True)
        _count(self.system, "budget system reserve")
        _count(self.response, "budget response reserve")
        _count(self.query, "budget query reserve")
        _count(self.history, "budget history tokens")
        _count(self.history_cap, "budget history_cap")
        for value, what in ((self.history_share, "history_share"), (self.margin, "margin")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0.0 <= value < 1.0):
                raise InvalidInput(f"budget {what} must be a number in [0, 1), got {value!r}")
        self.allocate()

    def allocate(self, query_tokens: int | None = None, history_tokens: int | None = None) -> Allocation:
        """Split the window for a query of ``query_tokens`` tokens (default: the ``query`` reserve).

        ``history_tokens`` (default: ``history``) is what the conversation so far would take;
        it gets at most ``history_share`` of what remains after the reserves and the query, and
        at most ``history_cap``.
        """
        query = self.query if query_tokens is None else _count(query_tokens, "query tokens")
        wanted = self.history if history_tokens is None else _count(history_tokens, "history tokens")
        reserved = self.system + self.response + query
        remaining = self.window - reserved
        if remaining <= 0:
            raise InvalidInput(
                f"token budget leaves no room for context: window {self.window} <= system {self.system} "
                f"+ response {self.response} + query {query} = {reserved}"
            )
        history = min(wanted, self.history_cap, math.floor(remaining * self.history_share))
        rest = remaining - history
        margin = math.ceil(rest * self.margin)
        context = rest - margin
        if context <= 0:
            raise InvalidInput(
                f"token budget leaves no room for context: window {self.window} - system {self.system} - response "
                f"{self.response} - query {query} - history {history} - margin {margin} = {context}"
            )
        return Allocation(self.window, self.system, self.response, query, history, margin, context)

    def context_tokens(self, query_tokens: int | None = None, history_tokens: int | None = None) -> int:
        """The tokens left for retrieved context (see :meth:`allocate`)."""
        return self.allocate(query_tokens, history_tokens).context


def resolve_budget(budget: object, query_tokens: int | None = None) -> tuple[int, Allocation | None]:
    """``(context tokens, allocation or None)`` for an int or :class:`TokenBudget` budget."""
    if isinstance(budget, TokenBudget):
        allocation = budget.allocate(query_tokens)
        return allocation.context, allocation
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise InvalidInput(f"budget must be a positive int (context tokens) or a TokenBudget, got {budget!r}")
    if budget <= 0:
        raise InvalidInput(f"budget must be a positive number of tokens, got {budget}")
    return budget, None
