"""The work behind the endpoints, one store's components together: the facade the app and ``graphfuse serve`` use.

All of it runs on the service's work loop (:class:`~graphfuse.server._work.WorkLoop`), never
on the loop that answers HTTP: :meth:`Service.run` hands a coroutine over. The pieces live in
modules of their own: the presets' pipelines (``_pipelines``), retrieval and contexts inside a
scope (``_retrieve``, ``_context``), ``/v1/compare`` (``_compare``), writes (``_ingest``), the
dashboard's graph (``_graph_view``), the warm-up (``_warm_up``) and ``/health`` (``_health``).
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .. import presets
from .._core._protocols import Embedder, GraphStore, Reranker, VectorStore
from .._core._types import Result
from .._retrieval._pipeline import Pipeline
from .._retrieval._result_cache import ResultCache
from ..indexing import SourceRecord
from ..multihop import CorpusCache
from ..rerankers import EmbeddingReranker
from ._compare import compare_answers
from ._context import scoped_context
from ._graph_view import GraphView
from ._health import health_report
from ._ingest import Writers, has_entity_nodes
from ._limits import Limits
from ._pipelines import PipelineSources, PresetPipelines, request_pipeline
from ._problems import Problem
from ._retrieve import result_json, retrieve
from ._scope import Scope
from ._session import SessionStats
from ._warm_up import WarmUp
from ._work import WorkLoop

__all__ = ["Service"]

T = TypeVar("T")


@dataclass
class Service:
    """One store's components and what the endpoints do with them.

    ``entity_graph``: whether ingest builds entity nodes from the text (``Indexer(entity_graph=True)``,
    each tenant's inside its own scope); ``None`` (the default) decides by the store: yes when
    it already holds entity nodes (it was indexed with an entity graph).

    ``corpus_cache`` (a :class:`~graphfuse.multihop.CorpusCache` of the store directory) lets
    presets that read the corpus (``multihop``) load their BM25 index and title linker from the
    persisted file, refreshed incrementally after ingests, instead of re-reading the whole
    corpus; ``graphfuse serve`` passes one for the embedded store.

    ``result_cache`` (a :class:`~graphfuse.ResultCache` over this store) keeps the results of the
    presets' pipelines (named ``preset:<name>``); a request may skip it (``no_cache``). Requests
    naming their own ``stages`` are never cached.

    ``work``: the loop all component work runs on (default: a :class:`WorkLoop` of its own
    allowing ``limits.max_concurrent_runs`` pipeline runs at once). Call the coroutine methods
    through :meth:`run` when calling from another loop; :meth:`aclose` stops the loop.
    """

    graph: GraphStore
    vectors: VectorStore
    embedder: Embedder
    reranker: Reranker | None = None
    default_preset: str = presets.DEFAULT_PRESET
    limits: Limits = field(default_factory=Limits)
    description: Mapping[str, str] = field(default_factory=dict)
    session: SessionStats = field(default_factory=SessionStats)
    generator: Any = None
    judge: Any = None
    basic_preset: str = "minimal"
    graph_preset: str = "multihop"
    max_answer_tokens: int = 256
    corpus_cache: CorpusCache | None = None
    entity_graph: bool | None = None
    work: WorkLoop | None = None
    result_cache: ResultCache | None = None

    def __post_init__(self) -> None:
        self._graph_view = GraphView(self.graph)
        self._presets = PresetPipelines()
        self._writers = Writers(entity_graph=self._entity_graph, on_write=self._presets.written)
        self._warm_up = WarmUp()
        if self.work is None:
            self.work = WorkLoop(self.limits.max_concurrent_runs)

    # -- the work loop ---------------------------------------------------------------------

    def _loop(self) -> WorkLoop:
        assert self.work is not None  # set in __post_init__
        return self.work

    async def run(self, coro: Coroutine[Any, Any, T], *, limited: bool = False) -> T:
        """``coro`` run on the work loop; ``limited``: as one of the ``max_concurrent_runs`` pipeline runs."""
        return await self._loop().run(coro, limited=limited)

    async def aclose(self) -> None:
        """Stop the work loop (what still runs on it is cancelled)."""
        await self._loop().aclose()

    @property
    def ready(self) -> bool:
        """Whether the warm-up :meth:`start_warm_up` began is over (True when none was started)."""
        return self._warm_up.ready

    def start_warm_up(self) -> None:
        """Begin :meth:`warm_up` on the work loop, in the background; :attr:`ready` says when it is over."""
        names = tuple(
            n
            for n in dict.fromkeys((self.default_preset, self.basic_preset, self.graph_preset))
            if n in self.preset_names
        )
        self._warm_up.start(self._loop(), names, self.embedder, self.pipeline)

    async def warm_up(self, names: Sequence[str] = ()) -> None:
        """Pay now what a first request would pay: the embedding model, the token counter, and each
        preset of ``names`` built and run once (retrieval and a context), so its lazily built parts
        exist. A preset that cannot serve this store is logged and skipped (requests naming it get the
        error); nothing is recorded in the session statistics.
        """
        await self._warm_up.run(names, self.embedder, self.pipeline)

    # -- pipelines -------------------------------------------------------------------------

    def _reranker(self) -> Reranker:
        if self.reranker is None:
            # Presets that rerank get one from the store's own embedder: offline, no extra model.
            self.reranker = EmbeddingReranker(self.embedder, vector_store=self.vectors)
        return self.reranker

    def _sources(self) -> PipelineSources:
        return PipelineSources(
            self.graph, self.vectors, self.embedder, self.reranker, self._reranker, self.corpus_cache, self.result_cache
        )

    @property
    def preset_names(self) -> tuple[str, ...]:
        """The presets a request may name: those registered when this service was made."""
        return self._presets.names

    async def pipeline(self, name: str) -> Pipeline:
        """The shared pipeline of preset ``name`` (built on first use, rebuilt after writes if it reads the corpus).

        ``name`` must be one of the presets registered when this service was made. A preset that
        reads the corpus up front (``bm25``, ``hybrid``, ``multihop``) is rebuilt when the store was
        written since, by this service or by another process (``graphfuse index``), as far as the
        graph store counts its writes (``generation()``). A build runs once per preset and
        generation, in a task of its own: a request that stops waiting for it (its deadline
        passed) leaves it to finish for the next one.
        """
        return await self._presets.get(name, self._sources())

    async def spec_pipeline(self, stages: Sequence[Any], scorer: Any) -> Pipeline:
        """A pipeline from a request's ``stages`` (and ``scorer``), allow-listed (built per request, off the loop).

        Only the stages and options of :data:`graphfuse.server._options.STAGES` (and the
        scorers of ``SCORERS``) pass; anything else is a 422 naming the entry.
        """
        return await request_pipeline(stages, scorer, self._sources(), max_stages=self.limits.max_stages)

    # -- retrieval and context -------------------------------------------------------------

    async def retrieve(
        self,
        scope: Scope,
        pipeline: Pipeline,
        query: str,
        *,
        top_k: int,
        client_filter: Any,
        granularity: str | None = None,
        max_per_document: int | None = None,
        cache: bool = True,
    ) -> tuple[list[Result], list[dict[str, Any]]]:
        """Run ``pipeline`` inside ``scope``; returns the results and their JSON form.

        ``granularity`` and ``max_per_document`` shape the results (:meth:`Pipeline.aretrieve`);
        ``max_per_document`` must be between 1 and ``top_k``.
        """
        return await retrieve(
            self.graph,
            scope,
            pipeline,
            query,
            top_k=top_k,
            client_filter=client_filter,
            timeout=self.limits.request_timeout,
            granularity=granularity,
            max_per_document=max_per_document,
            cache=cache,
        )

    @staticmethod
    def result_json(scope: Scope, r: Result) -> dict[str, Any]:
        """The JSON form of ``r`` with the ids ``scope`` knows."""
        return result_json(scope, r)

    async def context(
        self,
        scope: Scope,
        pipeline: Pipeline,
        label: str,
        query: str,
        *,
        budget: int,
        format: str,
        top_k: int | None,
        client_filter: Any,
        cache: bool = True,
        history: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]:
        """Retrieve inside ``scope`` and assemble a context of at most ``budget`` tokens (the last
        turns of ``history`` in their share of it)."""
        return await scoped_context(
            self.session,
            scope,
            pipeline,
            label,
            query,
            budget=budget,
            format=format,
            top_k=top_k,
            client_filter=client_filter,
            timeout=self.limits.request_timeout,
            cache=cache,
            history=history,
        )

    # -- compare ---------------------------------------------------------------------------

    async def compare(self, scope: Scope, question: str, *, gold: str | None, budget: int) -> dict[str, Any]:
        """LLM only, basic RAG and GraphRAG answers to ``question`` (and verdicts with ``gold``)."""
        if self.generator is None:
            raise Problem(
                503,
                "no LLM is configured on this server (start it with --llm NAME:MODEL): answers and judge scores "
                "need one; /v1/retrieve, /v1/context and the graph work without",
                extra={"llm": False},
            )
        basic = await self.pipeline(self.basic_preset)
        graph = await self.pipeline(self.graph_preset)
        return await compare_answers(
            self.session,
            scope,
            question,
            basic=basic,
            graph=graph,
            generator=self.generator,
            judge=self.judge,
            gold=gold,
            budget=budget,
            max_answer_tokens=self.max_answer_tokens,
        )

    # -- writes ----------------------------------------------------------------------------

    async def _entity_graph(self) -> bool:
        if self.entity_graph is None:
            self.entity_graph = await has_entity_nodes(self.graph)
        return self.entity_graph

    async def ingest(self, scope: Scope, records: Sequence[SourceRecord]) -> dict[str, Any]:
        """Index ``records`` (already stamped for ``scope``); durable once this returns."""
        return await self._writers.ingest(
            scope, records, graph=self.graph, vectors=self.vectors, embedder=self.embedder
        )

    async def delete(self, scope: Scope, doc_id: str) -> dict[str, Any]:
        """Delete one of the scope's documents (with its chunks and relations); 404 otherwise."""
        return await self._writers.delete(scope, doc_id, graph=self.graph, vectors=self.vectors, embedder=self.embedder)

    # -- graph -----------------------------------------------------------------------------

    async def subgraph(self, scope: Scope, results: Sequence[Result]) -> dict[str, Any]:
        """The relations among ``results`` (all in ``scope``): :meth:`GraphView.subgraph`."""
        return await self._graph_view.subgraph(scope, results)

    async def graph_stats(self, scope: Scope) -> dict[str, Any]:
        """Documents, chunks, entity nodes, relations by type and degrees of ``scope``: :meth:`GraphView.stats`."""
        return await self._graph_view.stats(scope)

    # -- health ----------------------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        """Version, whether the graph store, vector store and embedder answer, and whether the server is ready.

        Call it from the HTTP loop: the store probes run on the work loop; when that loop does not
        take them up within a second (a long computation holds it) they say ``busy``, and so does
        ``status``. ``ready`` is False while the start-up warm-up runs (``warming`` says what is
        left); ``work`` counts the pipeline runs in progress and waiting.
        """
        return await health_report(
            self._loop(), self.graph, self.vectors, self.embedder, warm_up=self._warm_up, description=self.description
        )
