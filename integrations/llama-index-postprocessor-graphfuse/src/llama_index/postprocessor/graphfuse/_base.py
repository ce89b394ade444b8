"""The shared base of GraphFuse node postprocessors: fields, the query, sync and async paths."""

from __future__ import annotations

from typing import Any

from llama_index.core.bridge.pydantic import Field, ValidationError
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.retrievers.graphfuse.nodes import SIGNALS_KEY, NodeMapping, run_on_nodes

from graphfuse import InvalidInput, MetadataFilter, NoCandidates, Query, Stage, run_sync
from graphfuse.hosts import host_query
from graphfuse.validation import check_keywords

from ._instrumentation import get_dispatcher

__all__ = ["GraphFusePostprocessor", "StageRunner"]

dispatcher = get_dispatcher(__name__)


class GraphFusePostprocessor(BaseNodePostprocessor):
    """Base of the GraphFuse postprocessors: how nodes map to GraphFuse records.

    Subclasses implement ``_process`` (async); ``postprocess_nodes`` runs it on GraphFuse's
    event-loop thread (:func:`graphfuse.run_sync`), ``apostprocess_nodes`` awaits it on the
    caller's loop. Pydantic validation errors surface as :class:`~graphfuse.InvalidInput`. The
    nodes passed in are never changed: the output holds copies.
    """

    id_key: str | None = Field(
        default=None, description="Metadata key holding the graph id; None: the ref_doc_id, else the node id."
    )
    signals_key: str = Field(default=SIGNALS_KEY, description="Metadata key the signals are stored under.")
    score_signal: str | None = Field(
        default="semantic", description="Signal that records a node's incoming score the first time it is seen."
    )
    created_at_key: str = Field(default="created_at", description="Metadata key of the creation time.")
    updated_at_key: str = Field(default="updated_at", description="Metadata key of the update time.")
    require_nodes: bool = Field(
        default=False, description="Raise graphfuse.NoCandidates on an empty node list instead of returning []."
    )

    def __init__(self, **data: Any) -> None:
        fields = type(self).model_fields
        known = sorted(n for n in fields if n != "callback_manager")
        check_keywords(data, known, type(self).__name__, hidden=fields)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InvalidInput(f"{type(self).__name__}: {exc}") from exc
        self._mapping()

    @classmethod
    def class_name(cls) -> str:
        return "GraphFusePostprocessor"

    def _mapping(self) -> NodeMapping:
        return NodeMapping(
            id_key=self.id_key,
            signals_key=self.signals_key,
            score_signal=self.score_signal,
            created_at_key=self.created_at_key,
            updated_at_key=self.updated_at_key,
        )

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        raise NotImplementedError

    async def _run(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        if not nodes:
            if self.require_nodes:
                raise NoCandidates(f"{self.class_name()} got no nodes")
            return []
        return await self._process(nodes, query_bundle)

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return run_sync(self._run(nodes, query_bundle))

    @dispatcher.span
    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return await self._run(nodes, query_bundle)


class StageRunner(GraphFusePostprocessor):
    """A postprocessor that runs one core GraphFuse stage over the nodes.

    The nodes are read as records (one per graph id), the stage runs as a pipeline runs it, and
    its output comes back in the stage's order: known ids as copies of their nodes carrying the
    new signals, new ids as new :class:`~llama_index.retrievers.graphfuse.GraphFuseNode` objects.
    """

    def _needs_query(self) -> bool:
        return False

    def _stage(self) -> Stage:
        """The stage, built from the current settings."""
        raise NotImplementedError

    def _filter(self) -> MetadataFilter | None:
        return None

    def _query(self, query_bundle: QueryBundle | None, stage: str) -> Query:
        return host_query(
            query_bundle.query_str if query_bundle is not None else None,
            needs_query=self._needs_query(),
            what=f"{self.class_name()} (stage {stage!r})",
            missing="it was called without one: pass query_bundle= or query_str= to postprocess_nodes",
            filter=self._filter(),
        )

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        stage = self._stage()
        return await run_on_nodes([stage], self._query(query_bundle, stage.name), nodes, self._mapping())
