"""The graph expansion stage: add documents related to the candidates, scored by hop distance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import InvalidInput
from .._protocols import GraphStore, RunContext
from .._types import Candidate, Query
from ._arguments import check_name, check_options, check_positive_int, check_relation_types, check_unit

__all__ = ["GraphExpansion"]

_OPTIONS = ("depth", "max_expansion", "relation_types")
_MAX_DEPTH = 3


class GraphExpansion:
    """Add documents within ``depth`` hops (1-3) of the current candidates.

    The current candidates are the seeds: ``graph_store.related`` is asked once for all of
    them, with the query's filter (the store applies it on every hop, so a document outside the
    filter is neither returned nor walked through), the ``relation_types`` to follow (``None``:
    all) and ``limit=max_expansion``. The new documents are loaded in one ``get_documents``
    batch (same filter), so later stages see their content, and appended after the seeds,
    nearest first.

    The ``graph`` signal is ``decay ** distance``: seeds (distance 0) get 1.0, a document one
    hop away ``decay`` (0.5), two hops ``decay ** 2`` (0.25), three hops 0.125.

    Per-call options: ``depth``, ``max_expansion``, ``relation_types``.
    """

    __slots__ = ("_decay", "_depth", "_graph_store", "_max_expansion", "_name", "_relation_types", "_signal")

    def __init__(
        self,
        graph_store: GraphStore,
        *,
        depth: int = 2,
        max_expansion: int = 100,
        relation_types: Sequence[str] | None = None,
        decay: float = 0.5,
        name: str = "graph",
        signal: str = "graph",
    ) -> None:
        if not callable(getattr(graph_store, "related", None)):
            raise InvalidInput(f"graph_store must be a GraphStore (with 'related'), got {graph_store!r}")
        self._graph_store = graph_store
        self._depth = check_positive_int(depth, "depth", high=_MAX_DEPTH)
        self._max_expansion = check_positive_int(max_expansion, "max_expansion")
        self._relation_types = check_relation_types(relation_types, "relation_types")
        self._decay = check_unit(decay, "decay", open_low=True)
        self._name = check_name(name, "name")
        self._signal = check_name(signal, "signal")

    @property
    def name(self) -> str:
        """The stage name (key of its per-call options)."""
        return self._name

    def __repr__(self) -> str:
        return (
            f"GraphExpansion(depth={self._depth}, max_expansion={self._max_expansion}, "
            f"relation_types={self._relation_types}, decay={self._decay}, name={self._name!r})"
        )

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._settings(options)

    def _settings(self, options: Mapping[str, Any]) -> tuple[int, int, tuple[str, ...] | None]:
        check_options(self._name, options, _OPTIONS)
        prefix = f"stage {self._name!r} option"
        depth = check_positive_int(options.get("depth", self._depth), f"{prefix} 'depth'", high=_MAX_DEPTH)
        cap = check_positive_int(options.get("max_expansion", self._max_expansion), f"{prefix} 'max_expansion'")
        types = self._relation_types
        if "relation_types" in options:
            types = check_relation_types(options["relation_types"], f"{prefix} 'relation_types'")
        return depth, cap, types

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        depth, cap, types = self._settings(query.options.get(self._name, {}))
        seeds = [c.with_signal(self._signal, 1.0) for c in candidates]
        if not seeds:
            return seeds
        present = {c.id for c in seeds}
        related = await self._graph_store.related(
            [c.id for c in seeds], depth=depth, filter=query.filter, relation_types=types, limit=cap
        )
        distance: dict[str, int] = {}
        for r in related:
            if r.id in present:
                continue
            if isinstance(r.distance, bool) or not isinstance(r.distance, int) or not 1 <= r.distance <= depth:
                raise InvalidInput(
                    f"graph store {type(self._graph_store).__name__} returned {r.id!r} at distance "
                    f"{r.distance!r} for depth {depth}"
                )
            distance[r.id] = min(r.distance, distance.get(r.id, r.distance))
        # The store applies the cap; a store that ignores it must not flood the candidates.
        new_ids = sorted(distance, key=lambda i: (distance[i], i))[:cap]
        if not new_ids:
            return seeds
        docs = await self._graph_store.get_documents(new_ids, filter=query.filter)
        added = [Candidate(docs[i], {self._signal: self._decay ** distance[i]}) for i in new_ids if i in docs]
        return seeds + added
