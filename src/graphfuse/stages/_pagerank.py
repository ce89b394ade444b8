"""The PageRank stage: pre-computed graph centrality as a signal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._capabilities import SignalInput
from .._core._errors import InvalidInput
from .._core._protocols import GraphStore, RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Query
from ..validation import check_options, check_unit
from ._named import NamedStage

__all__ = ["PageRank"]

_STORE_BACKED = StageTraits(reads_query=False)
_IN_MEMORY = StageTraits(reads_query=False, in_memory_only=True)
_INPUT = SignalInput("id")


class PageRank(NamedStage):
    """Set the ``pagerank`` signal from ``graph_store.pagerank(ids)`` (normalised to [0, 1], max 1).

    One call per run for the candidates' ids. A candidate the store has no score for (a
    document without relations, a store that computed nothing yet) gets ``default`` (0.5). A
    score outside [0, 1] from the store raises :class:`~graphfuse.InvalidInput`. Works on
    id-only candidates; no per-call options. A :class:`~graphfuse.hosts.SignalStage`: it reads only the id.
    """

    __slots__ = ("_default", "_graph_store")

    def __init__(
        self, graph_store: GraphStore, *, default: float = 0.5, name: str = "pagerank", signal: str = "pagerank"
    ) -> None:
        if not callable(getattr(graph_store, "pagerank", None)):
            raise InvalidInput(f"graph_store must be a GraphStore (with 'pagerank'), got {graph_store!r}")
        self._graph_store = graph_store
        self._default = check_unit(default, "default")
        self._set_names(name, signal)

    @property
    def traits(self) -> StageTraits:
        """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`): in memory only when its
        graph store declares ``in_memory_only = True`` (its methods never suspend, as
        :class:`~graphfuse.stores.InMemoryGraphStore`'s)."""
        return _IN_MEMORY if getattr(type(self._graph_store), "in_memory_only", False) is True else _STORE_BACKED

    @property
    def graph_store(self) -> GraphStore:
        """The graph store this stage reads PageRank from."""
        return self._graph_store

    def __repr__(self) -> str:
        return f"PageRank(default={self._default}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """PageRank takes no per-call options."""
        check_options(self._name, options, ())

    @property
    def signal(self) -> str:
        """The signal this stage sets."""
        return self._signal

    @property
    def signal_input(self) -> SignalInput:
        """What the signal is computed from: the document id."""
        return _INPUT

    async def signal_values(
        self, query: Query, ids: Sequence[str], values: Sequence[Any], context: RunContext | None = None
    ) -> list[float]:
        """The signal for each id (one store call), as ``run`` sets it; ``values`` are the ids again."""
        self.check_options(query.options.get(self._name, {}))
        return await self._values(ids)

    async def _values(self, ids: Sequence[str]) -> list[float]:
        if not ids:
            return []
        scores = await self._graph_store.pagerank(list(ids))
        out: list[float] = []
        default = self._default
        for doc_id in ids:
            value = scores.get(doc_id)
            if value is None:
                value = default
            elif type(value) is float and 0.0 <= value <= 1.0:
                out.append(value)
                continue
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise InvalidInput(
                    f"graph store {type(self._graph_store).__name__} returned PageRank {value!r} for "
                    f"{doc_id!r}; expected a number in [0, 1]"
                )
            out.append(float(value))
        return out

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.check_options(query.options.get(self._name, {}))
        values = await self._values([c.id for c in candidates])
        signal = self._signal
        return [c.with_signal(signal, v) for c, v in zip(candidates, values, strict=True)]
