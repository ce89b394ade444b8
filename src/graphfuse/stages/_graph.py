"""The graph expansion stage: add documents related to the candidates, scored by hop distance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import GraphStore, RunContext
from .._core._traits import StageTraits
from .._core._types import ENTITY_PREFIX, Candidate, Query
from ..validation import check_name, check_options, check_positive_int, check_relation_types, check_unit
from ._named import NamedStage

__all__ = ["GraphExpansion"]

_STORE_BACKED = StageTraits(reads_query=False)
_IN_MEMORY = StageTraits(reads_query=False, in_memory_only=True)

_OPTIONS = ("depth", "max_expansion", "relation_types", "min_seed_score")
_MAX_DEPTH = 3
# How far the store's limit is raised (times max_expansion) to fill the cap with documents when
# the walk passes through entity nodes, which are not added.
_WIDEN = 4
_MAX_WIDEN = 16


class GraphExpansion(NamedStage):
    """Add documents within ``depth`` hops (1-3) of the current candidates.

    The current candidates are the seeds: ``graph_store.related`` is asked once for all of
    them, with the query's filter (the store applies it on every hop, so a document outside the
    filter is neither returned nor walked through), the ``relation_types`` to follow (``None``:
    all) and ``limit=max_expansion``. The new documents are loaded in one ``get_documents``
    batch (same filter), so later stages see their content, and appended after the seeds,
    nearest first.

    Seeds carry their strength: a seed's strength is its ``seed_signal`` (``"semantic"``: the
    cosine of the vector hit), so a weak semantic hit is a weak seed. The ``graph`` signal is
    ``strength * decay ** distance``: a seed (distance 0) gets its own strength, a document one
    hop away ``strength * decay`` (decay 0.5), two hops ``strength * decay ** 2``, three hops
    ``strength * decay ** 3``, where ``strength`` is that of the seed it was reached from (the
    strongest seed at the nearest distance). A seed whose strength is 0 or below
    ``min_seed_score`` gets ``graph`` 0.0 and is not expanded from. A candidate without
    ``seed_signal`` (put there by another retriever), or any candidate when ``seed_signal`` is
    ``None``, is a seed of strength 1.0.

    Nodes whose id starts with ``pass_through`` (default: the entity nodes an
    ``Indexer(entity_graph=True)`` creates, :data:`~graphfuse.indexing.ENTITY_PREFIX`) are walked
    through but not added: they connect documents (two documents naming one entity are two
    hops apart) and are not documents themselves. When they take up the store's ``limit``,
    the store is asked again with a larger one (up to 16 x ``max_expansion``), so the cap is
    filled with documents. ``pass_through=None`` adds every related node.

    Per-call options: ``depth``, ``max_expansion``, ``relation_types``, ``min_seed_score``.
    """

    __slots__ = (
        "_decay",
        "_depth",
        "_graph_store",
        "_max_expansion",
        "_min_seed_score",
        "_pass_through",
        "_relation_types",
        "_seed_signal",
    )

    def __init__(
        self,
        graph_store: GraphStore,
        *,
        depth: int = 2,
        max_expansion: int = 100,
        relation_types: Sequence[str] | None = None,
        decay: float = 0.5,
        seed_signal: str | None = "semantic",
        min_seed_score: float = 0.0,
        pass_through: str | None = ENTITY_PREFIX,
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
        self._seed_signal = None if seed_signal is None else check_name(seed_signal, "seed_signal")
        self._min_seed_score = check_unit(min_seed_score, "min_seed_score")
        if pass_through is not None and (not isinstance(pass_through, str) or not pass_through):
            raise InvalidInput(f"pass_through must be a non-empty string or None, got {pass_through!r}")
        self._pass_through = pass_through
        self._set_names(name, signal)

    @property
    def traits(self) -> StageTraits:
        """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`): in memory only when its
        graph store declares ``in_memory_only = True`` (it awaits nothing else)."""
        return _IN_MEMORY if getattr(type(self._graph_store), "in_memory_only", False) is True else _STORE_BACKED

    @property
    def graph_store(self) -> GraphStore:
        """The graph store this stage walks."""
        return self._graph_store

    def __repr__(self) -> str:
        return (
            f"GraphExpansion(depth={self._depth}, max_expansion={self._max_expansion}, "
            f"relation_types={self._relation_types}, decay={self._decay}, seed_signal={self._seed_signal!r}, "
            f"min_seed_score={self._min_seed_score}, pass_through={self._pass_through!r}, name={self._name!r})"
        )

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._settings(options)

    def _settings(self, options: Mapping[str, Any]) -> tuple[int, int, tuple[str, ...] | None, float]:
        check_options(self._name, options, _OPTIONS)
        prefix = f"stage {self._name!r} option"
        depth = check_positive_int(options.get("depth", self._depth), f"{prefix} 'depth'", high=_MAX_DEPTH)
        cap = check_positive_int(options.get("max_expansion", self._max_expansion), f"{prefix} 'max_expansion'")
        types = self._relation_types
        if "relation_types" in options:
            types = check_relation_types(options["relation_types"], f"{prefix} 'relation_types'")
        floor = check_unit(options.get("min_seed_score", self._min_seed_score), f"{prefix} 'min_seed_score'")
        return depth, cap, types, floor

    def _strength(self, candidate: Candidate, floor: float) -> float:
        if self._seed_signal is None:
            return 1.0
        value = candidate.signals.get(self._seed_signal, 1.0)
        return value if value > 0.0 and value >= floor else 0.0

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        depth, cap, types, floor = self._settings(query.options.get(self._name, {}))
        strength = {c.id: self._strength(c, floor) for c in candidates}
        seeds = [c.with_signal(self._signal, strength[c.id]) for c in candidates]
        # Strongest first: the store names, for each document, the earliest seed at its nearest distance.
        walk = sorted((c.id for c in seeds if strength[c.id] > 0.0), key=lambda i: -strength[i])
        if not walk:
            return seeds
        present = {c.id for c in seeds}
        skip = self._pass_through
        limit = cap
        while True:
            related = await self._graph_store.related(
                walk, depth=depth, filter=query.filter, relation_types=types, limit=limit
            )
            distance: dict[str, int] = {}
            source: dict[str, float] = {}
            for r in related:
                if r.id in present:
                    continue
                if isinstance(r.distance, bool) or not isinstance(r.distance, int) or not 1 <= r.distance <= depth:
                    raise InvalidInput(
                        f"graph store {type(self._graph_store).__name__} returned {r.id!r} at distance "
                        f"{r.distance!r} for depth {depth}"
                    )
                if skip is not None and r.id.startswith(skip):
                    continue
                value = strength.get(r.seed, 1.0) * self._decay**r.distance
                if value > source.get(r.id, -1.0):
                    distance[r.id], source[r.id] = r.distance, value
            # (Only passed-through nodes can leave the cap unfilled while the store had more.)
            if len(distance) >= cap or len(related) < limit or limit >= cap * _MAX_WIDEN:
                break
            if skip is None or not any(r.id.startswith(skip) for r in related):
                break
            limit = min(limit * _WIDEN, cap * _MAX_WIDEN)
        # The store applies the cap; a store that ignores it must not flood the candidates.
        new_ids = sorted(distance, key=lambda i: (distance[i], i))[:cap]
        if not new_ids:
            return seeds
        docs = await self._graph_store.get_documents(new_ids, filter=query.filter)
        added = [Candidate(docs[i], {self._signal: source[i]}) for i in new_ids if i in docs]
        return seeds + added
