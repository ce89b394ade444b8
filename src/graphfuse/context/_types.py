"""What a context is: the text an LLM reads, its cost, and where every part came from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ._budget import Allocation
from ._history import Turn, history_block

__all__ = ["FORMATS", "Context", "ContextSource", "DroppedSource", "Format"]

Format = Literal["passages", "evidence", "graph"]
"""A context format (one of :data:`FORMATS`): whole passages, selected evidence sentences, a serialized subgraph."""
FORMATS: tuple[Format, ...] = ("passages", "evidence", "graph")
"""The context formats: whole passages, selected evidence sentences, a serialized subgraph."""


@dataclass(frozen=True, slots=True)
class ContextSource:
    """A source cited in a context: marker ``[n]`` in the text is ``sources[n - 1]``.

    ``id`` is the document id (chunks of one document are merged under it), ``title`` its
    ``title`` metadata (``None`` without one), ``score`` the pipeline's final score.
    ``shortened`` is true when only part of the text is in the context.
    """

    id: str
    title: str | None
    score: float
    shortened: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "title", "score", "shortened"}``."""
        return {"id": self.id, "title": self.title, "score": self.score, "shortened": self.shortened}


@dataclass(frozen=True, slots=True)
class DroppedSource:
    """A result left out of a context, and why (``reason``: ``"budget"`` or ``"cap"``)."""

    id: str
    title: str | None
    score: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "title", "score", "reason"}``."""
        return {"id": self.id, "title": self.title, "score": self.score, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Context:
    """A context assembled for an LLM prompt.

    ``text`` is what the model reads; ``tokens`` its length by ``counter`` (the counter's
    name), never more than ``budget``; ``format`` is ``"passages"``, ``"evidence"`` or
    ``"graph"``; ``sources`` are the documents cited (marker ``[n]`` is ``sources[n - 1]``);
    ``dropped`` the results that did not fit. ``allocation`` is the window split when the
    budget was a :class:`~graphfuse.context.TokenBudget`; ``sections`` the tokens per
    section of a graph context.

    With conversation history given, ``history`` holds the turns that fit its share (oldest
    first; the newest may be cut), ``history_tokens`` what their block costs by the same
    counter, ``history_dropped`` how many given turns were left out, and :attr:`prompt_text`
    is the history block followed by ``text``.
    """

    text: str
    tokens: int
    counter: str
    format: str
    sources: tuple[ContextSource, ...] = ()
    dropped: tuple[DroppedSource, ...] = ()
    budget: int = 0
    allocation: Allocation | None = None
    sections: Mapping[str, int] = field(default_factory=dict)
    history: tuple[Turn, ...] = ()
    history_tokens: int = 0
    history_dropped: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "history", tuple(self.history))
        object.__setattr__(self, "sources", tuple(self.sources))
        object.__setattr__(self, "dropped", tuple(self.dropped))
        object.__setattr__(self, "sections", MappingProxyType(dict(self.sections)))

    @property
    def prompt_text(self) -> str:
        """What the model reads: the conversation history block (``## Conversation History``, one
        ``Role: content`` line per kept turn, oldest first, then ``## Retrieved Information``)
        followed by :attr:`text`; just :attr:`text` when no turn was kept."""
        return history_block(self.history) + self.text

    @property
    def is_empty(self) -> bool:
        """True when no source made it into the context."""
        return not self.sources

    def to_dict(self) -> dict[str, Any]:
        """``{"text", "tokens", "counter", "format", "budget", "sources", "dropped", ...}`` (JSON-ready;
        with history, also ``history``, ``history_tokens``, ``history_dropped`` and ``prompt_text``)."""
        out: dict[str, Any] = {
            "text": self.text,
            "tokens": self.tokens,
            "counter": self.counter,
            "format": self.format,
            "budget": self.budget,
            "sources": [s.to_dict() for s in self.sources],
            "dropped": [d.to_dict() for d in self.dropped],
        }
        if self.allocation is not None:
            out["allocation"] = self.allocation.to_dict()
        if self.sections:
            out["sections"] = dict(self.sections)
        if self.history or self.history_dropped:
            out["history"] = [t.to_dict() for t in self.history]
            out["history_tokens"] = self.history_tokens
            out["history_dropped"] = self.history_dropped
            out["prompt_text"] = self.prompt_text
        return out
