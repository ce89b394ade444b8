"""GraphFuse stages as LangChain runnables over a list of documents.

Every runnable takes either a ``list[Document]`` (the query, if any, read from the
documents' ``metadata["graphfuse"]["query"]``, which :class:`GraphFuseRetriever` and these
runnables write) or a mapping ``{"query": str, "documents": [...], "filter": {...}}`` (what
:func:`with_query` produces from any retriever), and returns a ``list[Document]`` carrying
their signals and the query under ``metadata["graphfuse"]``. So runnables compose with ``|``.
The documents passed in are never changed: a runnable returns copies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig, RunnableParallel, RunnablePassthrough

import graphfuse.stages as gs
from graphfuse import FilterLike, GraphStore, InvalidInput, Reranker, Scorer, Stage, run_sync
from graphfuse.hosts import stage_traits
from graphfuse.plugins import Components, get_registry
from graphfuse.validation import check_half_life

from ._documents import DocumentMapping, StageInput, combine_filters, parse_input
from ._execution import Unknown, ainvoke_leaf, invoke_leaf, run_stages_on_documents

__all__ = [
    "AccessPopularityRunnable",
    "GraphExpansionRunnable",
    "PageRankRunnable",
    "RerankRunnable",
    "StageRunnable",
    "TemporalDecayRunnable",
    "with_query",
]

_UNKNOWN = ("keep", "error")


def with_query(retriever: Runnable[str, list[Document]]) -> Runnable[str, dict[str, Any]]:
    """Wrap any retriever so its output carries the query: ``{"query": q, "documents": [...]}``.

    Use it in front of a runnable that reads the query (``Rerank``, a plugin stage) when the
    retriever is not a :class:`GraphFuseRetriever`::

        chain = with_query(bm25_retriever) | RerankRunnable(reranker) | WeightedFusion(...)
    """
    return RunnableParallel(query=RunnablePassthrough(), documents=retriever)


class StageRunnable(Runnable[StageInput, list[Document]]):
    """Any GraphFuse stage (an instance, or a registered stage name) as a runnable over documents.

    ``StageRunnable("my_stage", components=Components(graph_store=store), alpha=2)`` builds the
    stage through the plugin registry, so a third-party plugin's stage is a runnable too.

    - ``requires_query``: whether the stage reads the query text. A stage that does, invoked
      without one, raises :class:`~graphfuse.InvalidInput`; one that does not gets a placeholder.
      Default: what the stage declares (:func:`graphfuse.hosts.stage_traits`): ``False`` for the
      built-ins that never read it (temporal, pagerank, access, graph, aggregate,
      hydrate), ``True`` for every other stage (a plugin stage must not run on a made-up query).
    - ``filter``: a metadata filter for the stage (ANDed with a filter that came with the input).
    - ``id_key``: the metadata key holding the GraphFuse id (default: ``Document.id``).
    - ``unknown``: ``"keep"`` (default) or ``"error"`` for documents the graph store does not hold
      (checked only when the runnable has a graph store).

    ``invoke``/``batch`` run the stage on GraphFuse's private loop; ``ainvoke``/``abatch`` run
    it natively on the caller's loop. A failing stage raises :class:`~graphfuse.StageFailed`.
    """

    def __init__(
        self,
        stage: Stage | str,
        *,
        components: Components | None = None,
        requires_query: bool | None = None,
        filter: FilterLike | None = None,
        id_key: str | None = None,
        unknown: Unknown = "keep",
        **options: Any,
    ) -> None:
        built: Stage
        if isinstance(stage, str):
            built = get_registry().build_stage(stage, components or Components(), **options)
        elif options:
            raise InvalidInput(f"options {sorted(options)} are only for a stage given by name, not an instance")
        else:
            built = stage
        if unknown not in _UNKNOWN:
            raise InvalidInput(f"unknown must be 'keep' or 'error', got {unknown!r}")
        self._stage = built
        traits = stage_traits(built)  # what the stage declares: whether it reads the query, does I/O
        self._requires_query = traits.reads_query if requires_query is None else bool(requires_query)
        self._filter = combine_filters(filter)
        self._mapping = self._document_mapping(id_key)
        self._unknown: Unknown = unknown
        self._graph_store: GraphStore | None = components.graph_store if components is not None else None
        # Pure in-memory work never suspends: a sync call runs it on the caller's thread. A graph
        # store that declares in_memory_only (InMemoryGraphStore) never suspends either.
        self._inline = traits.in_memory_only and (
            self._graph_store is None or getattr(type(self._graph_store), "in_memory_only", False) is True
        )
        self.name = f"graphfuse.{built.name}"

    def _document_mapping(self, id_key: str | None) -> DocumentMapping:
        return DocumentMapping(id_key)

    @property
    def stage(self) -> Stage:
        """The wrapped GraphFuse stage."""
        return self._stage

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._stage!r})"

    async def _arun(self, value: StageInput) -> list[Document]:
        what = f"runnable {self.name!r}"
        query, carried, docs = parse_input(value, what)
        # The runnable's own filter is validated (and combined) once, at construction.
        flt = self._filter if carried is None else combine_filters(self._filter, carried)
        return await run_stages_on_documents(
            [self._stage],
            docs,
            query=query,
            needs_query=self._requires_query,
            filter=flt,
            mapping=self._mapping,
            what=what,
            graph_store=self._graph_store,
            unknown=self._unknown,
        )

    def _run(self, value: StageInput) -> list[Document]:
        return run_sync(self._arun(value))

    def invoke(self, input: StageInput, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Run the stage over the documents (sync)."""
        if self._inline:  # nothing it runs can start a LangChain run of its own
            return invoke_leaf(self, self._run, input, config)
        return self._call_with_config(self._run, input, config)

    async def ainvoke(self, input: StageInput, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Run the stage over the documents (async, on the caller's loop)."""
        if self._inline:
            return await ainvoke_leaf(self, self._arun, input, config)
        return await self._acall_with_config(self._arun, input, config)


class TemporalDecayRunnable(StageRunnable):
    """The ``temporal`` signal ``0.5 ** (age / half_life)`` from a timestamp in the metadata.

    ``timestamp_key`` (default ``"created_at"``) names the metadata key read: a ``datetime``,
    an ISO 8601 string or POSIX seconds. A document without it gets, by ``missing``:
    ``"neutral"`` 0.5, ``"zero"`` 0.0, or ``"error"`` (the run fails, naming it). A 0.0 stays 0.0.

    ``half_life`` is a ``datetime.timedelta``; ``half_life_days`` gives it as a number of days.
    A bare number as ``half_life`` is refused (its unit would be a guess). The core stage of the
    same computation is :class:`graphfuse.stages.TemporalDecay` (for a GraphFuse ``Pipeline``);
    this class is its runnable over LangChain documents.
    """

    def __init__(
        self,
        *,
        half_life: timedelta | None = None,
        half_life_days: float | None = None,
        min_score: float | None = None,
        clock: Callable[[], datetime] | None = None,
        timestamp_key: str = "created_at",
        missing: str = "neutral",
        id_key: str | None = None,
        name: str = "temporal",
    ) -> None:
        if not isinstance(timestamp_key, str) or not timestamp_key:
            raise InvalidInput(f"timestamp_key must be a non-empty string, got {timestamp_key!r}")
        self._timestamp_key = timestamp_key
        stage = gs.TemporalDecay(
            half_life=check_half_life(half_life, half_life_days),
            min_score=min_score,
            clock=clock,
            timestamp="created_at",
            missing=missing,
            name=name,
        )
        super().__init__(stage, requires_query=False, id_key=id_key)

    def _document_mapping(self, id_key: str | None) -> DocumentMapping:
        return DocumentMapping(id_key, self._timestamp_key, "updated_at")


class PageRankRunnable(StageRunnable):
    """The ``pagerank`` signal: the graph store's pre-computed centrality, ``default`` when it has none.

    ``unknown="error"`` refuses documents the graph store does not hold (instead of giving them
    ``default``).
    """

    def __init__(
        self,
        graph_store: GraphStore,
        *,
        default: float = 0.5,
        unknown: Unknown = "keep",
        id_key: str | None = None,
        name: str = "pagerank",
    ) -> None:
        stage = gs.PageRank(graph_store, default=default, name=name)
        super().__init__(
            stage,
            components=Components(graph_store=graph_store),
            requires_query=False,
            id_key=id_key,
            unknown=unknown,
        )


class AccessPopularityRunnable(StageRunnable):
    """The ``access`` signal from a metadata counter (``key``, default ``access_count``).

    Counts are capped at ``max_access_count`` and normalised across the documents. A document
    without the key gets, by ``missing``: ``"neutral"`` 0.5, ``"zero"`` a count of 0, or
    ``"error"``.
    """

    def __init__(
        self,
        *,
        key: str = "access_count",
        max_access_count: float = 1000,
        missing: str = "neutral",
        id_key: str | None = None,
        name: str = "access",
    ) -> None:
        stage = gs.AccessPopularity(key=key, max_access_count=max_access_count, missing=missing, name=name)
        super().__init__(stage, requires_query=False, id_key=id_key)


class GraphExpansionRunnable(StageRunnable):
    """Add documents related to the input documents (up to ``depth`` hops) from the graph store.

    Input documents are the seeds, with their strength: their ``semantic`` signal when they
    carry one (documents from :class:`GraphFuseRetriever`), else 1.0 (documents from any other
    retriever). They get ``graph`` = that strength; new ones ``strength * decay ** distance``,
    appended nearest first, built from the graph store's documents. ``filter`` is honoured on
    every hop. (The core stage is :class:`graphfuse.stages.GraphExpansion`.)
    """

    def __init__(
        self,
        graph_store: GraphStore,
        *,
        depth: int = 2,
        max_expansion: int = 100,
        relation_types: Sequence[str] | None = None,
        decay: float = 0.5,
        filter: FilterLike | None = None,
        unknown: Unknown = "keep",
        id_key: str | None = None,
        name: str = "graph",
    ) -> None:
        stage = gs.GraphExpansion(
            graph_store, depth=depth, max_expansion=max_expansion, relation_types=relation_types, decay=decay, name=name
        )
        super().__init__(
            stage,
            components=Components(graph_store=graph_store),
            requires_query=False,
            filter=filter,
            id_key=id_key,
            unknown=unknown,
        )


class RerankRunnable(StageRunnable):
    """The ``rerank`` signal from a GraphFuse reranker for the ``top_k`` best documents (needs the query)."""

    def __init__(
        self,
        reranker: Reranker,
        *,
        top_k: int = 20,
        scorer: Scorer | None = None,
        id_key: str | None = None,
        name: str = "rerank",
    ) -> None:
        stage = gs.Rerank(reranker, top_k=top_k, scorer=scorer, name=name)
        super().__init__(stage, requires_query=True, id_key=id_key)
