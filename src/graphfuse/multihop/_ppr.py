"""Personalized PageRank over the document graph, seeded by the current candidates (HippoRAG-style)."""

from __future__ import annotations

import asyncio
import inspect
import math
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._core._capabilities import AdjacencySource
from .._core._errors import InvalidInput
from .._core._filters import MetadataFilter
from .._core._protocols import GraphStore, RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Document, Query
from .._pagerank import power_iteration, walk_matrix
from ..defaults import SEED_SIGNALS
from ..stages import NamedStage
from ..validation import check_name, check_options, check_positive_int, check_relation_types, check_unit

__all__ = ["NameLookup", "PersonalizedPageRank", "name_links", "personalized_pagerank"]

_OPTIONS = ("damping", "seeds", "limit")
GRAPH_SEEDS = "graph_seeds"
"""Key of ``RunContext.values`` where a stage leaves ``{node id: weight}`` of extra walk seeds."""
FloatArray = npt.NDArray[np.float64]
SeedBoost = Callable[[Sequence[Mapping[str, float]]], Mapping[str, float]]
"""Per-query multipliers of the seed weights, from the candidates' signals (:meth:`AdaptiveScorer.boosts`)."""


class NameLookup(Protocol):
    """What :class:`PersonalizedPageRank`'s ``names`` offers: the documents a name names
    (:meth:`~graphfuse.indexing.TitleLinker.lookup`)."""

    def lookup(self, title: str) -> tuple[str, ...]: ...


def name_links(
    ids: Sequence[str], adjacency: sp.spmatrix, names: NameLookup, prefix: str, weight: float
) -> sp.csr_matrix:
    """``adjacency`` plus a relation of ``weight`` from each passage to the documents named by an entity it mentions.

    An entity node (id ``prefix`` + its name) related to a passage (the indexer's
    ``MENTIONED_IN``) makes that passage lead to each document ``names`` knows by that name (the
    document titled, or about, the name), as a title link would. The node's own relations stay.
    """
    a = sp.csr_matrix(adjacency, dtype=np.float64)
    position = {d: i for i, d in enumerate(ids)}
    entity = np.fromiter((node.startswith(prefix) for node in ids), dtype=np.bool_, count=len(ids))
    rows: list[int] = []
    cols: list[int] = []
    for i in np.flatnonzero(entity).tolist():
        for target in names.lookup(ids[i][len(prefix) :]):
            j = position.get(target)
            if j is not None:
                rows.append(i)
                cols.append(j)
    if not rows:
        return a
    named = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=a.shape)
    held = np.unique(rows)
    # The named entities' relations to passages (not to the entities they co-occur with).
    mentions = (a[held] @ sp.diags((~entity).astype(np.float64))).tocsr()
    mentions.eliminate_zeros()
    mentions.data[:] = 1.0
    links = (mentions.T @ named[held]).tocsr()
    links.setdiag(0)  # a passage about a name mentions it too: no link to itself
    links.eliminate_zeros()
    links.data[:] = weight
    return (a + links).tocsr()


TOLERANCE = 1e-8
"""The walk stops when a step changes the scores by less than this (L1; they sum to 1)."""


def personalized_pagerank(
    adjacency: sp.csr_matrix, personalization: FloatArray, *, damping: float = 0.7, iterations: int = 30
) -> FloatArray:
    """PPR on an undirected graph: ``x = (1 - d) p + d W x`` with ``W`` the column-normalised adjacency.

    GraphFuse's one PageRank (:mod:`graphfuse._pagerank`, docs/stages.md "PageRank") restarting
    at ``personalization`` (normalised to sum 1), over ``adjacency`` symmetrised (relations are
    walked both ways) with its weights kept. Mass at a node without relations stays there (it
    is a seed that leads nowhere). Stops early when the L1 change is below 1e-8.
    """
    p = np.asarray(personalization, dtype=np.float64)
    if p.sum() <= 0:
        return np.zeros_like(p)
    walk = _kept(*walk_matrix(adjacency, reverse_weight=1.0))
    return _walk(walk, p, damping, iterations)


def _kept(walk: sp.csr_matrix, dangling: npt.NDArray[np.bool_]) -> sp.csr_matrix:
    """``walk`` in which a node without relations leads to itself: its mass stays, as a seed's should.

    Relations are walked both ways here, so such a node has no relation at all; under the
    shared model's rule (dangling mass restarts at the seeds) an isolated seed would hand most
    of its mass to the other seeds instead.
    """
    if not dangling.any():
        return walk
    return (walk + sp.diags(dangling.astype(np.float64))).tocsr()


def _walk(walk: sp.csr_matrix, p: FloatArray, damping: float, iterations: int) -> FloatArray:
    none = np.zeros(p.shape, dtype=np.bool_)  # _kept left no dangling node
    return power_iteration(walk, none, p, damping=damping, tolerance=TOLERANCE, max_iterations=iterations)


class _Graph:
    """An adjacency snapshot: ids, positions, degrees and the column-stochastic walk matrix.

    ``adjacency[i, j]`` is the weight of relations ``i -> j``. A step follows a relation
    forwards with its weight and backwards with ``reverse_weight`` times it.
    """

    def __init__(self, ids: Sequence[str], adjacency: sp.spmatrix, reverse_weight: float = 1.0) -> None:
        self.ids = list(ids)
        self.position = {d: i for i, d in enumerate(self.ids)}
        a = sp.csr_matrix(adjacency, dtype=np.float64)
        self.adjacency = a
        # Weighted degree: a passage's first mention counts 1, its tenth 0.1.
        self.degree = np.asarray((a + a.T).sum(axis=0)).ravel()
        self.walk = _kept(*walk_matrix(a, reverse_weight=reverse_weight))


async def store_adjacency(store: Any, relation_types: Sequence[str] | None) -> tuple[Sequence[str], Any] | None:
    """``(ids, directed adjacency)`` of the whole graph when the store offers it, else ``None``.

    Uses the store's ``adjacency(relation_types)`` (a coroutine, or a plain method for stores
    that hold the matrix at hand), as :meth:`~graphfuse.stores.SQLiteGraphStore.adjacency`.
    """
    if not isinstance(store, AdjacencySource):
        return None
    result: Any = store.adjacency(relation_types)
    if inspect.isawaitable(result):
        result = await result
    ids, matrix = result
    return ids, matrix


def checked_seed_signals(seed_signals: Mapping[str, float] | None) -> dict[str, float]:
    """``seed_signals`` (default :data:`~graphfuse.defaults.SEED_SIGNALS`) validated: names, weights >= 0, one > 0."""
    weights = dict(SEED_SIGNALS if seed_signals is None else seed_signals)
    for key, w in weights.items():
        check_name(key, "seed_signals key")
        check_unit(w, f"seed_signals[{key!r}]", high=1e6)
    if not any(weights.values()):
        raise InvalidInput("seed_signals needs at least one positive weight")
    return weights


def top_seeds(
    candidates: Sequence[Candidate], seed_signals: Mapping[str, float], n: int
) -> list[tuple[float, Candidate]]:
    """The ``n`` candidates with the highest positive ``sum(seed_signals[name] * signal)``, best first (ties by id)."""
    weighted = [(sum(w * c.signals.get(k, 0.0) for k, w in seed_signals.items()), c) for c in candidates]
    return sorted((s for s in weighted if s[0] > 0), key=lambda s: (-s[0], s[1].id))[:n]


class PersonalizedPageRank(NamedStage):
    """Spread the candidates' relevance over the graph; emit the ``ppr`` signal and new candidates.

    The ``seeds`` candidates with the highest seed weight (``sum(seed_signals[name] *
    signal)``) form the personalization vector (weighted by that seed weight to the power
    ``seed_power``, which sharpens it towards the best seeds); a random walk with restart
    (``damping``: probability of following a relation, 0.5-0.85) runs over the graph with
    relations walked both ways. A node's score is then divided by ``degree **
    degree_exponent`` (so hubs that every walk passes through do not win by being hubs).
    Every candidate gets ``ppr`` (its score divided by the best score), and the ``limit``
    best-scoring documents not yet candidates are added with ids only (put
    :class:`~graphfuse.stages.Hydrate` after this stage).

    ``seed_boost`` (optional) is called with the candidates' signals and returns a multiplier
    per signal name for this query (missing names: 1): the seed weights become
    ``seed_signals[name] * boost[name]``. The ``multihop`` preset passes its
    :class:`~graphfuse.scoring.AdaptiveScorer`'s :meth:`~graphfuse.scoring.AdaptiveScorer.boosts`,
    so the walk starts from the passages the query's own fusion trusts: on a corpus whose
    lexical ranking is sure of its best hit, the BM25 hits seed the walk as much as they
    weigh in the final score (docs/multihop.md).

    Other stages may add seeds that are graph nodes rather than candidates (the entity nodes a
    question names): ``{node id: weight}`` under ``context.values["graph_seeds"]``. Nodes whose
    id starts with ``exclude_prefix`` (entity nodes, :data:`~graphfuse.indexing.ENTITY_PREFIX`)
    are walked through but never added as candidates.

    A step follows a relation forwards (from the passage that mentions or links to the other)
    with its weight, and backwards with ``reverse_weight`` times it.

    Graph access: when ``graph_store`` offers ``adjacency(relation_types)`` returning
    ``(ids, scipy.sparse matrix)`` of directed relation weights (the embedded SQLite and
    in-memory stores do, see :meth:`~graphfuse.stores.SQLiteGraphStore.adjacency`), PPR runs
    over the whole graph with scipy (sparse products, no per-node Python); the walk matrix
    derived from it is cached until the store returns a new matrix object. With a metadata
    filter, the documents outside it are removed from that same directed, weighted graph
    (the walk cannot pass through them) and nothing else changes: a filter matching every
    document gives the unfiltered ranking. This needs the store's
    ``metadata_mask(filter)`` (see :meth:`~graphfuse.stores.SQLiteGraphStore.metadata_mask`).
    A store without ``adjacency`` (or, with a filter, without ``metadata_mask``) gets the
    fallback: the ``hops``-hop neighbourhood of the seeds from the protocol's ``related()``,
    which is undirected and unweighted.

    ``names`` (with ``exclude_prefix``; the ``multihop`` preset passes its title linker on a store
    whose graph comes from the text) rebuilds the title links such a graph lacks: a passage that
    mentions an entity leads, with ``name_weight``, to the documents ``names`` knows by the
    entity's name (:func:`name_links`; without titles, the passage whose subject it is), as a
    passage naming a title links to that document in a titled corpus. Without it, the entity
    node spreads the walk evenly over every passage that mentions the name. The links join the
    whole-graph walk (built once per adjacency snapshot, filtered like the rest); the
    neighbourhood fallback walks the store's own relations only.

    Per-call options: ``damping``, ``seeds``, ``limit``.
    """

    traits = StageTraits(reads_query=False)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = (
        "_cache",
        "_damping",
        "_degree_exponent",
        "_exclude_prefix",
        "_graph_store",
        "_hops",
        "_iterations",
        "_limit",
        "_lock",
        "_max_nodes",
        "_name_weight",
        "_names",
        "_relation_types",
        "_reverse_weight",
        "_seed_boost",
        "_seed_power",
        "_seed_signals",
        "_seeds",
    )

    def __init__(
        self,
        graph_store: GraphStore,
        *,
        damping: float = 0.5,
        seed_signals: Mapping[str, float] | None = None,
        seeds: int = 3,
        seed_power: float = 3.0,
        degree_exponent: float = 0.25,
        limit: int = 30,
        iterations: int = 30,
        relation_types: Sequence[str] | None = None,
        reverse_weight: float = 0.25,
        hops: int = 2,
        max_nodes: int = 2000,
        name: str = "ppr",
        signal: str = "ppr",
        exclude_prefix: str | None = None,
        seed_boost: SeedBoost | None = None,
        names: NameLookup | None = None,
        name_weight: float = 1.0,
    ) -> None:
        if not callable(getattr(graph_store, "related", None)):
            raise InvalidInput(f"graph_store must be a GraphStore (with 'related'), got {graph_store!r}")
        self._graph_store = graph_store
        self._damping = _check_damping(damping, "damping")
        self._seed_signals = checked_seed_signals(seed_signals)
        self._seeds = check_positive_int(seeds, "seeds")
        self._seed_power = check_unit(seed_power, "seed_power", high=10.0, open_low=True)
        self._degree_exponent = check_unit(degree_exponent, "degree_exponent", high=2.0)
        self._limit = check_positive_int(limit, "limit", low=0)
        self._iterations = check_positive_int(iterations, "iterations")
        self._relation_types = check_relation_types(relation_types, "relation_types")
        self._reverse_weight = check_unit(reverse_weight, "reverse_weight", open_low=True)
        self._hops = check_positive_int(hops, "hops", high=3)
        self._max_nodes = check_positive_int(max_nodes, "max_nodes")
        self._set_names(name, signal)
        if exclude_prefix is not None and (not isinstance(exclude_prefix, str) or not exclude_prefix):
            raise InvalidInput(f"exclude_prefix must be a non-empty string or None, got {exclude_prefix!r}")
        self._exclude_prefix = exclude_prefix
        if seed_boost is not None and not callable(seed_boost):
            raise InvalidInput(f"seed_boost must be callable or None, got {seed_boost!r}")
        self._seed_boost = seed_boost
        if names is not None and not callable(getattr(names, "lookup", None)):
            raise InvalidInput(f"names must offer lookup(name) (a TitleLinker), got {names!r}")
        if names is not None and exclude_prefix is None:
            raise InvalidInput("names needs exclude_prefix: the prefix of the entity nodes whose names it looks up")
        self._names = names
        self._name_weight = check_unit(name_weight, "name_weight", high=100.0, open_low=True)
        self._cache: tuple[weakref.ref[Any], _Graph] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"PersonalizedPageRank(damping={self._damping}, seeds={self._seeds}, limit={self._limit}, "
            f"seed_signals={self._seed_signals!r}, name={self._name!r})"
        )

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._settings(options)

    def _settings(self, options: Mapping[str, Any]) -> tuple[float, int, int]:
        check_options(self._name, options, _OPTIONS)
        prefix = f"stage {self._name!r} option"
        damping = _check_damping(options.get("damping", self._damping), f"{prefix} 'damping'")
        seeds = check_positive_int(options.get("seeds", self._seeds), f"{prefix} 'seeds'")
        limit = check_positive_int(options.get("limit", self._limit), f"{prefix} 'limit'", low=0)
        return damping, seeds, limit

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        damping, n_seeds, limit = self._settings(query.options.get(self._name, {}))
        seeds = [(w, c.id) for w, c in top_seeds(candidates, self._boosted(candidates), n_seeds)]
        extra = context.values.get(GRAPH_SEEDS) if isinstance(context.values, Mapping) else None
        extra = dict(extra) if isinstance(extra, Mapping) else {}
        if not seeds and not extra:
            return list(candidates)
        graph = await self._whole_graph()
        if graph is not None and query.filter is not None:
            graph = await self._restricted(graph, query.filter)
        if graph is None:
            graph = await self._neighbourhood([*(i for _, i in seeds), *extra], query.filter)
        p = np.zeros(len(graph.ids))
        for w, i in seeds:
            pos = graph.position.get(i)
            if pos is not None:
                p[pos] += w**self._seed_power
        for node, w in extra.items():
            pos = graph.position.get(node)
            if pos is not None and isinstance(w, (int, float)) and w > 0:
                p[pos] += float(w) ** self._seed_power
        if p.sum() <= 0:
            return list(candidates)
        x = _walk(graph.walk, p, damping, self._iterations)
        if self._degree_exponent:
            x = x / np.maximum(graph.degree, 1.0) ** self._degree_exponent
        top = float(x.max())
        score = x / top if top > 0 else x
        out = []
        for c in candidates:
            pos = graph.position.get(c.id)
            out.append(c.with_signal(self._signal, float(score[pos]) if pos is not None else 0.0))
        if limit:
            present = {c.id for c in candidates}
            nonzero = np.flatnonzero(score > 0)
            order = nonzero[np.argsort(-score[nonzero], kind="stable")]
            added = 0
            for pos in order.tolist():
                if added >= limit:
                    break
                doc_id = graph.ids[pos]
                if self._exclude_prefix is not None and doc_id.startswith(self._exclude_prefix):
                    continue  # an entity node: it leads to passages, it is not one
                if doc_id not in present:
                    out.append(Candidate(Document(doc_id), {self._signal: float(score[pos])}))
                    added += 1
        return out

    def _boosted(self, candidates: Sequence[Candidate]) -> Mapping[str, float]:
        """The seed weights for this query: ``seed_signals`` times ``seed_boost``'s multipliers."""
        if self._seed_boost is None:
            return self._seed_signals
        boost = self._seed_boost([c.signals for c in candidates])
        weights = {}
        for name, w in self._seed_signals.items():
            factor = boost.get(name, 1.0)
            if (
                isinstance(factor, bool)
                or not isinstance(factor, (int, float))
                or not math.isfinite(factor)
                or factor < 0
            ):
                raise InvalidInput(f"stage {self._name!r}: seed_boost gave {factor!r} for {name!r} (a number >= 0)")
            weights[name] = w * float(factor)
        return weights

    async def _whole_graph(self) -> _Graph | None:
        snapshot = await store_adjacency(self._graph_store, self._relation_types)
        if snapshot is None:
            return None
        ids, matrix = snapshot
        with self._lock:
            cached = self._cache
            if cached is not None and cached[0]() is matrix:
                return cached[1]
        if self._names is not None and self._exclude_prefix is not None:
            adjacency = name_links(ids, matrix, self._names, self._exclude_prefix, self._name_weight)
        else:
            adjacency = matrix
        graph = _Graph(ids, adjacency, self._reverse_weight)
        with self._lock:
            self._cache = (weakref.ref(matrix), graph)
        return graph

    async def _restricted(self, graph: _Graph, flt: MetadataFilter) -> _Graph | None:
        """``graph`` without the documents outside ``flt`` (same weights and directions)."""
        accessor = getattr(self._graph_store, "metadata_mask", None)
        if not callable(accessor):
            return None
        result = accessor(flt)
        if inspect.isawaitable(result):
            result = await result
        ids, mask = result
        keep = np.asarray(mask, dtype=np.bool_)
        if tuple(ids) != tuple(graph.ids):  # the graph changed in between: align by id
            allowed = {i for i, m in zip(ids, keep.tolist(), strict=True) if m}
            keep = np.fromiter((i in allowed for i in graph.ids), np.bool_, len(graph.ids))
        rows = np.flatnonzero(keep)
        matrix = graph.adjacency[rows][:, rows]
        return _Graph([graph.ids[i] for i in rows.tolist()], matrix, self._reverse_weight)

    async def _neighbourhood(self, seeds: list[str], flt: MetadataFilter | None) -> _Graph:
        store, types = self._graph_store, self._relation_types
        nodes: dict[str, int] = {s: i for i, s in enumerate(seeds)}
        edges: set[tuple[int, int]] = set()
        frontier = list(seeds)
        for _ in range(self._hops):
            answers = await asyncio.gather(
                *(store.related([x], depth=1, filter=flt, relation_types=types) for x in frontier)
            )
            new: list[str] = []
            for x, related in zip(frontier, answers, strict=True):
                for r in related:
                    if r.id not in nodes:
                        if len(nodes) >= self._max_nodes:
                            continue
                        nodes[r.id] = len(nodes)
                        new.append(r.id)
                    a, b = sorted((nodes[x], nodes[r.id]))
                    edges.add((a, b))
            frontier = new
            if not frontier:
                break
        n = len(nodes)
        rows = np.fromiter((a for a, _ in edges), np.int64, len(edges))
        cols = np.fromiter((b for _, b in edges), np.int64, len(edges))
        adjacency = sp.csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(n, n))
        return _Graph(list(nodes), adjacency, 1.0)


def _check_damping(value: object, what: str) -> float:
    return check_unit(value, what, low=0.0, high=0.99, open_low=True)
