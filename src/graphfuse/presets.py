"""Ready-made pipelines, by name.

- ``standard``: semantic -> hydrate -> graph -> temporal -> pagerank -> access -> rerank,
  scored by :class:`~graphfuse.scoring.WeightedScorer` with ``DEFAULT_WEIGHTS``.
- ``minimal``: semantic -> hydrate (vector search only), scored by the cosine itself.
- ``no_rerank``: ``standard`` without the rerank stage.
- ``multihop``: semantic -> bm25 -> entity -> aggregate -> ppr -> aggregate, for questions that need two
  passages (:func:`graphfuse.multihop.multihop`; imported on first use, so listing presets
  stays cheap).

``build(name, **components)`` builds a preset from keyword components; ``register`` adds a
preset (a plugin or an application may add its own).

The built-in presets build their stages and scorer by name through the plugin registry
(:func:`graphfuse.plugins.get_registry`), as a declarative spec does: a name two plugins
register raises the same :class:`~graphfuse.PluginError` everywhere.
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ._errors import AlreadyExists, InvalidInput
from ._pipeline import Pipeline
from ._protocols import Embedder, GraphStore, Reranker, VectorStore
from .plugins import Components, get_registry

__all__ = ["build", "minimal", "names", "no_rerank", "register", "standard"]

PresetFactory = Callable[..., Pipeline]

_STAGE_KEYS = ("semantic", "graph", "temporal", "pagerank", "access", "rerank")


def _options(stage_options: Mapping[str, Any], allowed: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    unknown = sorted(set(stage_options) - set(allowed))
    if unknown:
        raise InvalidInput(f"options for unknown stage(s) {unknown}; this preset takes: {', '.join(allowed)}")
    out: dict[str, dict[str, Any]] = {}
    for key in allowed:
        value = stage_options.get(key, {})
        if not isinstance(value, Mapping):
            raise InvalidInput(f"options for stage {key!r} must be a mapping of keyword arguments, got {value!r}")
        out[key] = dict(value)
    return out


def _graph_pipeline(
    graph_store: GraphStore,
    vector_store: VectorStore,
    embedder: Embedder,
    reranker: Reranker | None,
    weights: Mapping[str, float] | None,
    stage_options: Mapping[str, Any],
) -> Pipeline:
    allowed = _STAGE_KEYS if reranker is not None else _STAGE_KEYS[:-1]
    opts = _options(stage_options, allowed)
    registry = get_registry()
    components = Components(graph_store=graph_store, vector_store=vector_store, embedder=embedder, reranker=reranker)
    scorer = _weighted(weights)
    stages: list[Any] = [
        registry.build_stage("semantic", components, **opts["semantic"]),
        registry.build_stage("hydrate", components),
        registry.build_stage("graph", components, **opts["graph"]),
        registry.build_stage("temporal", components, **opts["temporal"]),
        registry.build_stage("pagerank", components, **opts["pagerank"]),
        registry.build_stage("access", components, **opts["access"]),
    ]
    if reranker is not None:
        # The rerank stage picks its top_k by the same weights as the final score.
        stages.append(registry.build_stage("rerank", components, **{"scorer": scorer, **opts["rerank"]}))
    return Pipeline(stages, scorer)


def _weighted(weights: Mapping[str, float] | None) -> Any:
    if weights is None:
        return get_registry().create("scorer", "weighted")
    return get_registry().create("scorer", "weighted", weights=weights)


def standard(
    graph_store: GraphStore,
    vector_store: VectorStore,
    embedder: Embedder,
    reranker: Reranker,
    *,
    weights: Mapping[str, float] | None = None,
    **stage_options: Mapping[str, Any],
) -> Pipeline:
    """All seven stages, weighted by ``weights`` (default ``DEFAULT_WEIGHTS``).

    The rerank stage chooses its ``top_k`` by the same weights, unless ``rerank={"scorer": ...}``.

    ``stage_options`` passes keyword arguments to a stage by its name, e.g.
    ``standard(g, v, e, r, graph={"depth": 1}, temporal={"half_life": timedelta(days=30)})``.
    """
    return _graph_pipeline(graph_store, vector_store, embedder, reranker, weights, stage_options)


def no_rerank(
    graph_store: GraphStore,
    vector_store: VectorStore,
    embedder: Embedder,
    *,
    weights: Mapping[str, float] | None = None,
    **stage_options: Mapping[str, Any],
) -> Pipeline:
    """``standard`` without the rerank stage (faster; no reranker needed)."""
    return _graph_pipeline(graph_store, vector_store, embedder, None, weights, stage_options)


def minimal(vector_store: VectorStore, embedder: Embedder, graph_store: GraphStore | None = None) -> Pipeline:
    """Vector search only: semantic, then hydrate when a ``graph_store`` is given.

    The score is the ``semantic`` signal (the cosine, floored at 0), not a share of a weighted
    sum. Without a graph store the results carry ids and the ``semantic`` signal, no content.
    """
    registry = get_registry()
    components = Components(graph_store=graph_store, vector_store=vector_store, embedder=embedder)
    stages: list[Any] = [registry.build_stage("semantic", components)]
    if graph_store is not None:
        stages.append(registry.build_stage("hydrate", components))
    return Pipeline(stages, _weighted({"semantic": 1.0}))


_lock = threading.Lock()
# A string is a factory not imported yet: "module:attribute", resolved by the first build.
_PRESETS: dict[str, PresetFactory | str] = {
    "standard": standard,
    "minimal": minimal,
    "no_rerank": no_rerank,
    "multihop": "graphfuse.multihop:multihop",
}


def names() -> list[str]:
    """The registered preset names, sorted."""
    with _lock:
        return sorted(_PRESETS)


def register(name: str, factory: PresetFactory, *, replace: bool = False) -> None:
    """Register ``factory(**components) -> Pipeline`` as preset ``name``.

    Raises :class:`~graphfuse.AlreadyExists` when the name is taken (unless ``replace``).
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise InvalidInput(f"preset name must be an identifier, got {name!r}")
    if not callable(factory):
        raise InvalidInput(f"preset factory for {name!r} must be callable, got {factory!r}")
    with _lock:
        if name in _PRESETS and not replace:
            raise AlreadyExists(f"preset {name!r} is already registered")
        _PRESETS[name] = factory


def build(name: str, **components: Any) -> Pipeline:
    """Build preset ``name`` from keyword components (``graph_store=``, ``vector_store=``, ...).

    Raises :class:`~graphfuse.InvalidInput` for an unknown name (listing the known ones) or a
    missing or unexpected component (naming it).
    """
    with _lock:
        entry = _PRESETS.get(name)
        known = sorted(_PRESETS)
    if entry is None:
        raise InvalidInput(f"unknown preset {name!r}; known presets: {', '.join(known)}")
    factory = _resolve(name, entry)
    try:
        inspect.signature(factory).bind(**components)
    except TypeError as exc:
        raise InvalidInput(f"preset {name!r}: {exc}") from exc
    pipeline = factory(**components)
    if not isinstance(pipeline, Pipeline):
        raise InvalidInput(f"preset {name!r} returned {type(pipeline).__name__}, not a Pipeline")
    return pipeline


def _resolve(name: str, entry: PresetFactory | str) -> PresetFactory:
    if not isinstance(entry, str):
        return entry
    module, _, attribute = entry.partition(":")
    factory: PresetFactory = getattr(importlib.import_module(module), attribute)
    with _lock:
        if _PRESETS.get(name) == entry:  # unless register(..., replace=True) came in between
            _PRESETS[name] = factory
    return factory
