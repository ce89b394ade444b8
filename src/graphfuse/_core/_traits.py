"""What a stage declares about itself, so hosts need no lists of stage classes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["DeclaresTraits", "StageTraits", "stage_traits"]


@dataclass(frozen=True, slots=True)
class StageTraits:
    """A stage's capability declaration.

    ``reads_query``: the stage reads the query text (a host calling it without a query must
    refuse, not make one up); ``needs_stores``: it reads a backend (graph store, vector store,
    reranker, ...); ``in_memory_only``: it only computes over the candidates and never suspends,
    so a sync host may run it inline without an event loop hop.
    """

    reads_query: bool = True
    needs_stores: bool = True
    in_memory_only: bool = False


UNDECLARED = StageTraits()
"""What a stage that declares nothing is taken to be: reads the query, needs stores, does I/O."""


@runtime_checkable
class DeclaresTraits(Protocol):
    """A stage with a ``traits`` attribute (a :class:`StageTraits`)."""

    @property
    def traits(self) -> StageTraits: ...


def stage_traits(stage: object) -> StageTraits:
    """The stage's declared :class:`StageTraits`, or the cautious default when it declares none."""
    traits = getattr(type(stage), "traits", None)
    if not isinstance(traits, StageTraits):
        traits = getattr(stage, "traits", None)
    return traits if isinstance(traits, StageTraits) else UNDECLARED
