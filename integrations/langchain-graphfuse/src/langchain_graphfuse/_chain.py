"""SignalChainRunnable: several signal runnables and a fusion as one runnable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig

from graphfuse import InvalidInput, run_sync
from graphfuse.hosts import as_signal_stage, host_query
from graphfuse.records import StageChain, check_known, fuse

from ._documents import DocumentMapping, StageInput, combine_filters, documents_from_hits, parse_input, read_documents
from ._execution import _MISSING, ainvoke_leaf, invoke_leaf
from ._fusion import WeightedFusion
from ._stages import StageRunnable

__all__ = ["SignalChainRunnable"]


class SignalChainRunnable(Runnable[StageInput, list[Document]]):
    """Signal runnables and then a fusion as one runnable: the documents read once, copied once.

    ``SignalChainRunnable([TemporalDecayRunnable(), PageRankRunnable(store),
    AccessPopularityRunnable()], fusion=WeightedFusion(...))`` returns what
    ``TemporalDecayRunnable() | PageRankRunnable(store) | AccessPopularityRunnable() |
    WeightedFusion(...)`` returns (the same documents, order, ``metadata["graphfuse"]`` and
    errors), but reads the documents into records once and copies each once, instead of once per
    runnable. The steps are runnables whose stage only sets a signal (temporal, PageRank, access,
    a :class:`StageRunnable` over a signal stage; see :func:`graphfuse.hosts.as_signal_stage`);
    graph expansion and rerank run as runnables of their own. Every step and the fusion must
    read documents alike (``id_key``, the timestamp key). LangChain sees one run instead of one
    per runnable. Input: what the runnables take (a list of documents or ``{"query",
    "documents"[, "filter"]}``).
    """

    def __init__(self, steps: Sequence[StageRunnable], fusion: WeightedFusion | None = None) -> None:
        if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence):
            raise InvalidInput(f"SignalChainRunnable steps must be a list of runnables, got {steps!r}")
        for step in steps:
            if not isinstance(step, StageRunnable) or type(step)._arun is not StageRunnable._arun:
                raise InvalidInput(
                    f"SignalChainRunnable steps must be signal runnables (temporal, PageRank, access, a "
                    f"StageRunnable), got {type(step).__name__}: run it as a runnable of its own"
                )
            if as_signal_stage(step.stage) is None:
                raise InvalidInput(
                    f"SignalChainRunnable: {type(step).__name__} runs stage {step.stage.name!r}, which does more "
                    "than set a signal: run it as a runnable of its own"
                )
        if fusion is not None and not isinstance(fusion, WeightedFusion):
            raise InvalidInput(f"SignalChainRunnable fusion must be a WeightedFusion or None, got {fusion!r}")
        mappings = [step._mapping for step in steps] + ([fusion._mapping] if fusion is not None else [])
        if not mappings:
            raise InvalidInput("SignalChainRunnable needs at least one step or a fusion")
        if steps:
            # The fusion reads no timestamp: only its id_key has to agree with the steps'.
            odd = [m for m in mappings[1 : len(steps)] if m != mappings[0]]
            if fusion is not None and fusion._mapping.id_key != mappings[0].id_key:
                odd.append(fusion._mapping)
            if odd:
                raise InvalidInput(
                    f"SignalChainRunnable: the steps read documents differently ({mappings[0]} vs {odd[0]}); "
                    "give every step the same id_key and timestamp key"
                )
        self._steps = tuple(steps)
        self._fusion = fusion
        self._mapping: DocumentMapping = mappings[0]
        self._inline = all(step._inline for step in steps)
        self.name = "graphfuse.signal_chain"

    @property
    def steps(self) -> tuple[StageRunnable, ...]:
        """The signal runnables, in the order they run."""
        return self._steps

    @property
    def fusion(self) -> WeightedFusion | None:
        """The fusion run after the steps, if any."""
        return self._fusion

    def __repr__(self) -> str:
        return f"SignalChainRunnable({list(self._steps)!r}, fusion={self._fusion!r})"

    async def _arun(self, value: StageInput) -> list[Document]:
        first = f"runnable {self._steps[0].name!r}" if self._steps else "runnable 'graphfuse.fusion'"
        query, flt, docs = parse_input(value, first)
        if not docs:
            return []
        chain = StageChain(read_documents(docs, self._mapping))
        for step in self._steps:
            what = f"runnable {step.name!r}"
            store = step._graph_store if step._unknown == "error" else None
            if store is not None or (step._requires_query and query is None):
                # What raises next must come after the steps before it have run, as one runnable after another.
                hits = await chain.hits()
            # The filter travels with the documents from step to step, as the runnables one after the other pass it.
            flt = step._filter if flt is None else combine_filters(step._filter, flt)
            stage_query = host_query(query, needs_query=step._requires_query, what=what, missing=_MISSING, filter=flt)
            if store is not None:
                await check_known(store, [h.id for h in hits], what)
            chain.add(step.stage, stage_query)
        hits = await chain.hits()
        if self._fusion is None:
            return documents_from_hits(hits, query=query, filter=flt, mapping=self._mapping)
        ranked = fuse(hits, self._fusion._scorer, top_n=self._fusion._top_n)
        return documents_from_hits(ranked, query=query, filter=flt, mapping=self._fusion._mapping)

    def _run(self, value: StageInput) -> list[Document]:
        return run_sync(self._arun(value))

    def invoke(self, input: StageInput, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Run the steps and the fusion over the documents (sync)."""
        if self._inline:  # nothing it runs can start a LangChain run of its own
            return invoke_leaf(self, self._run, input, config)
        return self._call_with_config(self._run, input, config)

    async def ainvoke(self, input: StageInput, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Run the steps and the fusion over the documents (async, on the caller's loop)."""
        if self._inline:
            return await ainvoke_leaf(self, self._arun, input, config)
        return await self._acall_with_config(self._arun, input, config)
