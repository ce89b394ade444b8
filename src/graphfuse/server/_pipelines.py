"""The pipelines requests run: the presets' shared ones and those a request's ``stages`` name.

A preset's pipeline is built once and shared by every request (a pipeline is immutable and safe
to share). Presets that read the whole corpus (``multihop``, ``bm25``, ``hybrid``: a BM25 index,
a title linker) are rebuilt after a write, this service's or another process's, the first time
they are used again; a build runs once per preset and generation, in a task of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import presets
from .._core._errors import GraphFuseError, InvalidInput
from .._core._protocols import Embedder, GraphStore, Reranker, VectorStore
from .._retrieval._pipeline import Pipeline
from .._retrieval._result_cache import ResultCache
from ..multihop import CorpusCache, acorpus_inputs
from ..plugins import Components, build_pipeline
from ._options import check_scorer, check_stages
from ._problems import Problem

__all__ = ["PipelineSources", "PresetPipelines", "request_pipeline"]

Generation = tuple[int, int | None]


@dataclass(frozen=True)
class PipelineSources:
    """What a pipeline is built from, as the service holds it when one is asked for.

    ``make_reranker`` returns the service's reranker, making one when it has none;
    ``reranker`` is the one it has (or ``None``).
    """

    graph: GraphStore
    vectors: VectorStore
    embedder: Embedder
    reranker: Reranker | None
    make_reranker: Callable[[], Reranker]
    corpus_cache: CorpusCache | None
    result_cache: ResultCache | None


@dataclass
class _Built:
    pipeline: Pipeline
    generation: Generation | None  # the corpus it read (PresetPipelines._corpus_generation), or None


async def _build_preset(name: str, sources: PipelineSources) -> Pipeline:
    preset = presets.get(name)
    reads_corpus = "corpus_indexes" in preset.inputs
    reranker = sources.make_reranker() if "reranker" in preset.inputs else None
    options: dict[str, Any] = {}
    if reads_corpus and sources.corpus_cache is not None:
        options.update(await acorpus_inputs(sources.graph, cache=sources.corpus_cache))
    pipeline = await presets.abuild(
        name,
        graph_store=sources.graph,
        vector_store=sources.vectors,
        embedder=sources.embedder,
        reranker=reranker,
        **options,
    )
    if sources.result_cache is not None:
        pipeline = pipeline.with_result_cache(sources.result_cache, name=f"preset:{name}")
    return pipeline


class PresetPipelines:
    """The shared pipeline of each preset registered when it was made, rebuilt after writes if it reads the corpus."""

    def __init__(self) -> None:
        self.names: tuple[str, ...] = tuple(presets.names())
        self._writes = 0
        self._pipelines: dict[str, _Built] = {}
        self._build_lock = asyncio.Lock()
        self._building: dict[str, asyncio.Future[Pipeline]] = {}

    def written(self) -> None:
        """Note a write of this service: presets that read the corpus are rebuilt on their next use."""
        self._writes += 1

    async def _corpus_generation(self, graph: GraphStore) -> Generation:
        """Which corpus a preset that reads it up front would read: this service's writes, and the
        graph store's own write counter when it keeps one (``generation()``: moved by every write,
        ``graphfuse index`` in another process included)."""
        counter = getattr(graph, "generation", None)
        store = await counter() if callable(counter) else None
        return self._writes, store if isinstance(store, int) else None

    async def get(self, name: str, sources: PipelineSources) -> Pipeline:
        """The shared pipeline of preset ``name`` (see :meth:`graphfuse.server.Service.pipeline`)."""
        if name not in self.names:
            known = ", ".join(self.names)
            raise Problem.invalid("preset", f"unknown preset {name[:64]!r}; known presets: {known}")
        reads_corpus = "corpus_indexes" in presets.get(name).inputs
        generation = await self._corpus_generation(sources.graph) if reads_corpus else None
        built = self._pipelines.get(name)
        if built is not None and built.generation == generation:
            return built.pipeline
        async with self._build_lock:
            built = self._pipelines.get(name)
            if built is not None and built.generation == generation:
                return built.pipeline
            task = self._building.get(name)
            if task is None or task.done():
                task = self._building[name] = asyncio.ensure_future(self._build_and_keep(name, generation, sources))
                # Retrieved here when no request is left waiting for it (no "never retrieved" warning).
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return await asyncio.shield(task)

    async def _build_and_keep(self, name: str, generation: Generation | None, sources: PipelineSources) -> Pipeline:
        try:
            pipeline = await _build_preset(name, sources)
        except InvalidInput as exc:
            raise Problem.invalid("preset", f"preset {name!r} cannot serve this store: {exc}") from exc
        finally:
            self._building.pop(name, None)
        self._pipelines[name] = _Built(pipeline, generation)
        return pipeline


async def request_pipeline(
    stages: Sequence[Any], scorer: Any, sources: PipelineSources, *, max_stages: int
) -> Pipeline:
    """A pipeline from a request's ``stages`` (and ``scorer``), allow-listed (see :meth:`Service.spec_pipeline`)."""
    spec: dict[str, Any] = {"stages": check_stages(stages, max_stages)}
    if scorer is not None:
        spec["scorer"] = check_scorer(scorer)
    reranker = sources.make_reranker() if any(s["name"] == "rerank" for s in spec["stages"]) else sources.reranker
    components = Components(
        graph_store=sources.graph, vector_store=sources.vectors, embedder=sources.embedder, reranker=reranker
    )
    try:
        return await asyncio.to_thread(build_pipeline, spec, components)
    except InvalidInput as exc:
        where = "stages"
        text = str(exc)
        if text.startswith("stages["):
            where = text.split(":", 1)[0]
        elif text.startswith("scorer"):
            where = "scorer"
        raise Problem.invalid(where, text) from exc
    except GraphFuseError as exc:
        raise Problem.invalid("stages", str(exc)) from exc
