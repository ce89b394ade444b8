"""SignalChainPostprocessor: several signal postprocessors and a fusion as one postprocessing step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.retrievers.graphfuse.nodes import NodeMapping, nodes_from_hits, read_nodes

from graphfuse import InvalidInput, Stage, run_sync
from graphfuse.hosts import as_signal_stage
from graphfuse.records import StageChain, fuse

from ._base import GraphFusePostprocessor, StageRunner
from ._fusion import WeightedFusionPostprocessor

__all__ = ["SignalChainPostprocessor"]

_MAPPING_FIELDS = ("id_key", "signals_key", "score_signal", "created_at_key", "updated_at_key")


class SignalChainPostprocessor(GraphFusePostprocessor):
    """Run signal postprocessors and then a fusion in one step: the nodes read once, copied once.

    ``SignalChainPostprocessor([TemporalDecayPostprocessor(), PageRankPostprocessor(store),
    AccessPostprocessor()], fusion=WeightedFusionPostprocessor(weights=...))`` returns what the
    four postprocessors return one after the other (the same nodes, order, scores, signals and
    errors), but reads the nodes into records once and builds each output node once, instead of
    once per postprocessor. The steps are postprocessors whose stage only sets a signal
    (temporal, PageRank, access, a :class:`StagePostprocessor` over a signal stage; see
    :func:`graphfuse.hosts.as_signal_stage`); graph expansion or rerank run as postprocessors of
    their own. Every step and the fusion must map nodes alike (``id_key``, ``signals_key``,
    ``score_signal``, timestamp keys): the chain takes their settings. Each step keeps its own
    settings and query checks; LlamaIndex sees one postprocessing event instead of one per step.
    """

    _steps: tuple[StageRunner, ...] = PrivateAttr(default=())
    _fusion: WeightedFusionPostprocessor | None = PrivateAttr(default=None)

    def __init__(
        self,
        steps: Sequence[StageRunner],
        fusion: WeightedFusionPostprocessor | None = None,
        **data: Any,
    ) -> None:
        if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence):
            raise InvalidInput(f"SignalChainPostprocessor steps must be a list of postprocessors, got {steps!r}")
        for step in steps:
            if not isinstance(step, StageRunner) or type(step)._process is not StageRunner._process:
                raise InvalidInput(
                    f"SignalChainPostprocessor steps must be signal postprocessors (temporal, PageRank, access, "
                    f"a StagePostprocessor), got {type(step).__name__}: run it as a postprocessor of its own"
                )
            stage = step._stage()
            if as_signal_stage(stage) is None:
                raise InvalidInput(
                    f"SignalChainPostprocessor: {type(step).__name__} runs stage {stage.name!r}, which does more "
                    "than set a signal: run it as a postprocessor of its own"
                )
        if fusion is not None and not isinstance(fusion, WeightedFusionPostprocessor):
            raise InvalidInput(
                f"SignalChainPostprocessor fusion must be a WeightedFusionPostprocessor or None, got {fusion!r}"
            )
        parts: list[GraphFusePostprocessor] = [*steps, *([fusion] if fusion is not None else [])]
        if not parts:
            raise InvalidInput("SignalChainPostprocessor needs at least one step or a fusion")
        given = {name for name in _MAPPING_FIELDS if name in data}
        if given:
            raise InvalidInput(
                f"SignalChainPostprocessor takes {', '.join(sorted(given))} from its steps; set it on them"
            )
        super().__init__(**data, **{name: getattr(parts[0], name) for name in _MAPPING_FIELDS})
        self._steps = tuple(steps)
        self._fusion = fusion
        self._mapping_of_parts()

    @classmethod
    def class_name(cls) -> str:
        return "SignalChainPostprocessor"

    @property
    def steps(self) -> tuple[StageRunner, ...]:
        """The signal postprocessors, in the order they run."""
        return self._steps

    @property
    def fusion(self) -> WeightedFusionPostprocessor | None:
        """The fusion run after the steps, if any."""
        return self._fusion

    def _mapping_of_parts(self) -> NodeMapping:
        # Read at every call too: a step's settings may have changed since construction.
        parts: list[GraphFusePostprocessor] = [*self._steps, *([self._fusion] if self._fusion is not None else [])]
        first = tuple(getattr(parts[0], name) for name in _MAPPING_FIELDS)
        for part in parts[1:]:
            if tuple(getattr(part, name) for name in _MAPPING_FIELDS) != first:
                raise InvalidInput(
                    f"SignalChainPostprocessor: {type(part).__name__} maps nodes differently from "
                    f"{type(parts[0]).__name__} ({part._mapping()} vs {parts[0]._mapping()}); give every step "
                    f"the same {', '.join(_MAPPING_FIELDS)}"
                )
        return parts[0]._mapping()

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        # The steps' stages built once for the call, from their current settings.
        stages = [step._stage() for step in self._steps]
        return run_sync(self._run_chain(nodes, query_bundle, stages))

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        return await self._chain(nodes, query_bundle, [step._stage() for step in self._steps])

    async def _run_chain(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None, stages: list[Stage]
    ) -> list[NodeWithScore]:
        if not nodes:  # as every GraphFuse postprocessor answers no nodes
            return await self._run(nodes, query_bundle)
        return await self._chain(nodes, query_bundle, stages)

    async def _chain(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None, stages: list[Stage]
    ) -> list[NodeWithScore]:
        mapping = self._mapping_of_parts()
        chain: StageChain[NodeWithScore] | None = None
        for step, stage in zip(self._steps, stages, strict=True):
            query = step._query(query_bundle, stage.name)
            if chain is None:  # as the steps one after the other: the first one's query, then the nodes read
                chain = StageChain(read_nodes(nodes, mapping))
            chain.add(stage, query)
        if chain is None:
            chain = StageChain(read_nodes(nodes, mapping))
        # A stage's failure is StageFailed naming it, and of its cause's GraphFuse class too.
        hits = await chain.hits()
        if self._fusion is None:
            return nodes_from_hits(hits, mapping)
        ranked = fuse(hits, self._fusion._scorer())
        return nodes_from_hits(ranked, mapping, fused=True)[: self._fusion.top_n]
