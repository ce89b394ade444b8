"""Ready-made pipelines, by name: the one preset catalogue.

The built-in presets (``standard``, ``minimal``, ``no_rerank``, ``multihop``, ``bm25``,
``hybrid``) are registered by the built-in plugin through the ``register_presets`` hook, like any
plugin's, and build their stages and scorer by name through the plugin registry. Each
:class:`Preset` declares what it ``needs`` and ``uses`` (:data:`INPUTS`); :func:`build` builds one by
name, supplying the corpus indexes from the graph store and naming any missing input;
:func:`register` adds an application's preset. Every builder has an ``a``-prefixed async twin
(docs/architecture.md, "Sync and async"). :data:`DEFAULT_PRESET` is what every door retrieves with.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from ._core._capabilities import DocumentListing
from ._core._errors import InvalidInput
from ._core._preset_options import DEFAULT_PRESET
from ._core._preset_options import stage_options as _options
from ._core._protocols import Embedder, GraphStore, Reranker, VectorStore
from ._core._sync import async_form, sync_form
from ._retrieval._passages import Passages
from ._retrieval._pipeline import Pipeline
from .plugins import INPUTS, Components, Preset, get_registry

__all__ = [
    "DEFAULT_PRESET",
    "INPUTS",
    "Preset",
    "abuild",
    "aminimal",
    "amultihop",
    "ano_rerank",
    "astandard",
    "build",
    "get",
    "minimal",
    "multihop",
    "names",
    "no_rerank",
    "register",
    "standard",
    "unregister",
]


@runtime_checkable
class _PipelineSource(Protocol):
    """What :func:`multihop` takes as a store directory: it builds a preset over its own components
    (:meth:`graphfuse.stores.StoreDirectory.pipeline`); the store layer sits above this module."""

    async def apipeline(self, preset: str | None = ..., **options: Any) -> Pipeline: ...


PresetFactory = Callable[..., Pipeline]

_STAGE_KEYS = ("semantic", "graph", "temporal", "pagerank", "access", "rerank")


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
    return Pipeline(stages, scorer, passages=Passages(graph_store, vector_store, embedder))


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
    sum. Without a graph store the results carry ids and the ``semantic`` signal, no content;
    with one, results are passages, at most two of one document (:class:`~graphfuse.Passages`).
    """
    registry = get_registry()
    components = Components(graph_store=graph_store, vector_store=vector_store, embedder=embedder)
    stages: list[Any] = [registry.build_stage("semantic", components)]
    passages = None
    if graph_store is not None:
        stages.append(registry.build_stage("hydrate", components))
        passages = Passages(graph_store, vector_store, embedder)
    return Pipeline(stages, _weighted({"semantic": 1.0}), passages=passages)


async def amultihop(
    store: Any,
    vector_store: VectorStore | None = None,
    embedder: Embedder | None = None,
    *,
    reranker: Reranker | None = None,
    **options: Any,
) -> Pipeline:
    """The ``multihop`` pipeline over a store, in one call: ``presets.multihop(store)`` (sync) or
    ``await presets.amultihop(store)``.

    ``store`` is a store directory (:func:`graphfuse.stores.open_store`, what ``graphfuse index``
    writes; its corpus indexes are read from the directory's cache) or a graph store given with
    its ``vector_store`` and ``embedder`` (the corpus indexes, entity matcher and timeline are
    read back from the graph store, as :func:`build` does). ``options`` go to
    :func:`graphfuse.multihop.multihop` (weights, per-stage options). Results are passages
    (:class:`~graphfuse.Passages`). Raises :class:`~graphfuse.InvalidInput` when a graph store
    comes without its vector store and embedder.
    """
    if isinstance(store, _PipelineSource):
        if vector_store is not None or embedder is not None:
            raise InvalidInput("presets.multihop(store): a store directory brings its own vector store and embedder")
        return await store.apipeline("multihop", reranker=reranker, **options)
    if vector_store is None or embedder is None:
        raise InvalidInput(
            "presets.multihop needs a store directory (graphfuse.stores.open_store), or a graph store with its "
            f"vector_store and embedder; got {type(store).__name__} without "
            + " and ".join(n for n, v in (("vector_store", vector_store), ("embedder", embedder)) if v is None)
        )
    return await abuild(
        "multihop", graph_store=store, vector_store=vector_store, embedder=embedder, reranker=reranker, **options
    )


multihop = sync_form(amultihop)
"""Sync form of :func:`amultihop`: same arguments, result and errors, no event loop needed."""


def names() -> list[str]:
    """The registered preset names, sorted."""
    return [p.name for p in get_registry().presets()]


def get(name: str) -> Preset:
    """The catalogue entry of preset ``name`` (what it needs and uses).

    Raises :class:`~graphfuse.InvalidInput` for an unknown name, listing the known ones.
    """
    return get_registry().preset(name)


def register(
    name: str,
    factory: PresetFactory | str,
    *,
    needs: Iterable[str] = (),
    uses: Iterable[str] = (),
    description: str = "",
    replace: bool = False,
) -> None:
    """Register ``factory(**inputs) -> Pipeline`` as preset ``name`` (an application's own).

    ``needs``/``uses`` declare its inputs (:data:`INPUTS`); without them :func:`build` passes
    whatever it is given. Plugins use the ``register_presets``
    hook instead. Raises :class:`~graphfuse.AlreadyExists` when the name is taken (unless
    ``replace``), :class:`~graphfuse.InvalidInput` for a bad declaration.
    """
    preset = Preset.declare(name, factory, needs=needs, uses=uses, description=description)
    get_registry().add_preset(preset, replace=replace)


def unregister(name: str) -> None:
    """Remove a preset added with :func:`register` (plugins' presets stay; ``NotFound`` if absent)."""
    get_registry().remove_preset(name)


def _construct(name: str, **inputs: Any) -> Pipeline:
    preset = get(name)
    factory = preset.factory()
    try:
        inspect.signature(factory).bind(**inputs)
    except TypeError as exc:
        raise InvalidInput(f"preset {name!r}: {exc}") from exc
    pipeline = factory(**inputs)
    if not isinstance(pipeline, Pipeline):
        raise InvalidInput(f"preset {name!r} returned {type(pipeline).__name__}, not a Pipeline")
    return pipeline


async def abuild(
    name: str,
    *,
    graph_store: GraphStore | None = None,
    vector_store: VectorStore | None = None,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    bm25: Any = None,
    linker: Any = None,
    timeline: Any = None,
    entities: Any = None,
    **options: Any,
) -> Pipeline:
    """Build preset ``name`` from the components given, supplying what the preset declares:
    ``presets.build(name, graph_store=..., ...)`` (sync) or ``await presets.abuild(...)``.

    Of the given components, the preset receives those it needs or uses (a host may pass a
    reranker to every preset; one that does not use it never sees it); a preset registered
    without declaring its inputs receives every component given. When the preset needs or
    uses ``corpus_indexes`` and ``bm25``/``linker`` are not given, they are read from the graph
    store with :func:`graphfuse.multihop.corpus_inputs` (the store must be a
    :class:`~graphfuse.DocumentListing`), and so are a ``timeline`` and the ``entities`` for a
    factory that takes them (``multihop``), so it adapts to a dated or title-less store; given
    ones are used as they are. The title linker goes only to a factory that takes a ``linker``
    (``multihop``, not ``bm25`` or ``hybrid``). ``options`` go to the factory as they are (weights,
    per-stage options). A needed input that is missing raises :class:`~graphfuse.InvalidInput`
    naming it, as does an option the factory does not take, or a factory that returns no
    :class:`~graphfuse.Pipeline`. The factory itself runs in a worker thread (it is
    synchronous and may be slow).
    """
    preset = get(name)
    have: dict[str, Any] = {
        "graph_store": graph_store,
        "vector_store": vector_store,
        "embedder": embedder,
        "reranker": reranker,
    }
    if not preset.inputs:  # an application's preset that declares nothing gets what it is given
        given = {**have, "bm25": bm25, "linker": linker, "timeline": timeline, "entities": entities}
        return await async_form(_construct)(name, **{k: v for k, v in given.items() if v is not None}, **options)
    inputs: dict[str, Any] = {k: v for k, v in have.items() if v is not None and k in preset.inputs}
    if "corpus_indexes" in preset.inputs:
        takes = inspect.signature(preset.factory()).parameters
        given = {"bm25": bm25, "linker": linker, "timeline": timeline, "entities": entities}
        # The title linker comes with the BM25 index: given to a factory that names it (as the
        # timeline and the entities are), not to one that ranks by words only.
        wanted = [k for k in given if k == "bm25" or k in takes]
        if bm25 is None and linker is None:
            if isinstance(graph_store, DocumentListing):
                from .multihop import acorpus_inputs

                read = await acorpus_inputs(graph_store)
                given = {k: read[k] if v is None else v for k, v in given.items()}
            elif "corpus_indexes" in preset.needs:
                which = "none was given" if graph_store is None else f"{type(graph_store).__name__} cannot list them"
                raise InvalidInput(
                    f"preset {name!r} needs the corpus indexes (BM25, title linker), read back from the graph "
                    f"store's documents, but {which}: use a graph store that lists its documents (the embedded "
                    "'sqlite' one), or pass bm25= and linker="
                )
        elif isinstance(graph_store, DocumentListing):
            if given["timeline"] is None and "timeline" in takes:
                from .timeaware import Timeline

                given["timeline"] = await Timeline.afrom_store(graph_store)
            if given["entities"] is None and "entities" in takes:
                from .multihop import aentity_matcher

                given["entities"] = await aentity_matcher(graph_store)
        inputs.update({k: given[k] for k in wanted if given[k] is not None})
    missing = [k for k in sorted(preset.needs) if k != "corpus_indexes" and k not in inputs]
    if missing:
        raise InvalidInput(f"preset {name!r} needs {', '.join(missing)}, which the caller did not give")
    # The factory is synchronous and may be slow (a plugin's preset reading a model or a file):
    # it runs in a worker thread, so the caller's event loop keeps serving while it builds.
    return await async_form(_construct)(name, **inputs, **options)


build = sync_form(abuild)
"""Sync form of :func:`abuild`: same arguments, result and errors, no event loop needed."""
astandard = async_form(standard)
"""Async form of :func:`standard`: same arguments, result and errors, run in a worker thread."""
ano_rerank = async_form(no_rerank)
"""Async form of :func:`no_rerank`: same arguments, result and errors, run in a worker thread."""
aminimal = async_form(minimal)
"""Async form of :func:`minimal`: same arguments, result and errors, run in a worker thread."""
