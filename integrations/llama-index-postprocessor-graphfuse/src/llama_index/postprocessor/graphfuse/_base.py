"""The shared base of GraphFuse node postprocessors: node mapping, empty input, the query, sync/async."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar, cast

from llama_index.core.bridge.pydantic import Field, PrivateAttr, ValidationError
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.retrievers.graphfuse.nodes import (
    SIGNALS_KEY,
    NodeMapping,
    apply_signal_stage,
    from_candidates,
    to_candidates,
)

from graphfuse import (
    GraphFuseError,
    InvalidInput,
    MetadataFilter,
    NoCandidates,
    Query,
    SignalStage,
    Stage,
    StageFailed,
    as_signal_stage,
    run_stage,
    run_sync,
    stage_traits,
)

from ._instrumentation import get_dispatcher

__all__ = ["GraphFusePostprocessor", "StageRunner"]

dispatcher = get_dispatcher(__name__)

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])


def _presigned(fn: _F) -> _F:
    """``fn`` carrying its own signature as ``__signature__`` (computed once, here).

    LlamaIndex's instrumentation span around ``_postprocess_nodes`` / ``_apostprocess_nodes`` binds
    the call's arguments with ``inspect.signature(fn)`` on every call, which otherwise rebuilds the
    signature from the code object each time (a fifth of a small postprocessor's cost). With
    ``__signature__`` set, ``inspect`` returns it: the same span, the same bound arguments.
    """
    fn.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return fn


class _Plan(NamedTuple):
    """What a stage postprocessor runs with, built once per settings."""

    stage: Stage
    signal_stage: SignalStage | None  # the stage, when it runs on values read from the nodes
    mapping: NodeMapping
    in_memory_only: bool
    no_query: Query | None  # the query for a call without one; None: the stage needs one


# Query text for stages that never read it (temporal, PageRank, access, graph) when the host
# passes no query: graphfuse.Query needs a non-empty text.
_NO_QUERY_TEXT = "(no query)"


class GraphFusePostprocessor(BaseNodePostprocessor):
    """Base of the GraphFuse postprocessors: how nodes map to GraphFuse candidates.

    Subclasses implement ``_process`` (async); the sync ``postprocess_nodes`` runs it through
    :func:`graphfuse.run_sync`, the async ``apostprocess_nodes`` awaits it on the caller's loop.
    Pydantic validation errors surface as :class:`~graphfuse.InvalidInput`.

    Nodes from elsewhere are never mutated. The list a GraphFuse postprocessor returns holds
    GraphFuse's own nodes: given that list as it was returned, the signal postprocessors
    (temporal, access, PageRank) and ``WeightedFusionPostprocessor`` update those nodes in place
    (signals, score) instead of copying them, so the earlier list sees the update. A copy of the
    list (``list(nodes)``, a slice) is copied as any other input.
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

    _memo: dict[str, tuple[dict[str, Any], dict[str, Any], Any]] = PrivateAttr(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        unknown = sorted(set(data) - set(type(self).model_fields))
        if unknown:
            known = sorted(n for n in type(self).model_fields if n != "callback_manager")
            hints = [
                f"{u!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, known, 1)) else repr(u)
                for u in unknown
            ]
            raise InvalidInput(
                f"{type(self).__name__} got unknown keyword argument(s) {', '.join(hints)}; "
                f"it takes: {', '.join(known)}"
            )
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InvalidInput(f"{type(self).__name__}: {exc}") from exc
        self._mapping()

    @classmethod
    def class_name(cls) -> str:
        return "GraphFusePostprocessor"

    def _mapping(self) -> NodeMapping:
        return self._built("mapping", self._new_mapping)

    def _new_mapping(self) -> NodeMapping:
        return NodeMapping(
            id_key=self.id_key,
            signals_key=self.signals_key,
            score_signal=self.score_signal,
            created_at_key=self.created_at_key,
            updated_at_key=self.updated_at_key,
        )

    def _built(self, what: str, build: Callable[[], _T]) -> _T:
        """``build()``, memoised until a field or private attribute of this postprocessor changes
        (fields can be reassigned after construction, so the memo is checked against them)."""
        private = self.__pydantic_private__ or {}
        memos = private.get("_memo")
        if memos is None:  # pragma: no cover - pydantic always sets the private attributes' defaults
            return build()
        memo = memos.get(what)
        # The private snapshot holds the memo dict itself: compared by identity, so no recursion.
        if memo is not None and memo[0] == self.__dict__ and memo[1] == private:
            return cast("_T", memo[2])
        value = build()
        memos[what] = (dict(self.__dict__), dict(private), value)
        return value

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        raise NotImplementedError

    async def _run(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        if not nodes:
            if self.require_nodes:
                raise NoCandidates(f"{self.class_name()} got no nodes")
            return []
        return await self._process(nodes, query_bundle)

    @_presigned
    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if self._in_memory_only():
            # Pure in-memory work never suspends: run it on the caller's thread, no hop to GraphFuse's loop.
            coro = self._run(nodes, query_bundle)
            try:
                coro.send(None)
            except StopIteration as done:
                return cast("list[NodeWithScore]", done.value)
            coro.close()  # it did suspend after all: it was side-effect free, so run it again properly
        return run_sync(self._run(nodes, query_bundle))

    def _in_memory_only(self) -> bool:
        """True when ``_process`` never awaits anything that suspends (no I/O, no store): the sync path then
        runs it inline. Subclasses that only compute over the nodes return True."""
        return False

    @dispatcher.span
    @_presigned
    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return await self._run(nodes, query_bundle)


class StageRunner(GraphFusePostprocessor):
    """A postprocessor that runs one GraphFuse stage over the nodes.

    Nodes become candidates (one per graph id), the stage runs, and its output maps back to
    nodes in the stage's order: known ids to their nodes (with the new signals), new ids to new
    ``TextNode`` objects with no score. A stage error that is not a GraphFuse error is raised as
    :class:`~graphfuse.StageFailed` naming the stage. A :class:`graphfuse.SignalStage` (temporal,
    access, PageRank) runs on values read from the nodes instead, with the same result
    (:func:`llama_index.retrievers.graphfuse.nodes.apply_signal_stage`).
    """

    def _needs_query(self) -> bool:
        return False

    def _stage(self) -> Stage:
        """Build the stage from the current settings (memoised by :meth:`_current_stage`)."""
        raise NotImplementedError

    def _current_stage(self) -> Stage:
        return self._plan().stage

    def _plan(self) -> _Plan:
        return self._built("plan", self._new_plan)

    def _new_plan(self) -> _Plan:
        stage = self._stage()
        return _Plan(
            stage,
            as_signal_stage(stage),
            self._mapping(),
            stage_traits(stage).in_memory_only,
            None if self._needs_query() else Query(_NO_QUERY_TEXT, self._filter()),
        )

    def _in_memory_only(self) -> bool:
        return self._plan().in_memory_only

    def _filter(self) -> MetadataFilter | None:
        return None

    def _query(self, query_bundle: QueryBundle | None, stage: str, plan: _Plan | None = None) -> Query:
        text = query_bundle.query_str if query_bundle is not None else ""
        if not text or not text.strip():
            no_query = (plan or self._plan()).no_query
            if no_query is None:
                raise InvalidInput(
                    f"{self.class_name()} (stage {stage!r}) needs the query text, but it was called without "
                    "one: pass query_bundle= or query_str= to postprocess_nodes"
                )
            return no_query
        return Query(text, self._filter())

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        plan = self._plan()
        stage = plan.stage
        query = self._query(query_bundle, stage.name, plan)
        mapping = plan.mapping
        try:
            if plan.signal_stage is not None:
                # Values read from the nodes, no candidates: the same nodes and signals, a fraction of the work.
                return await apply_signal_stage(plan.signal_stage, query, nodes, mapping)
            converted = to_candidates(nodes, mapping)
            # The core's stage runner: the pipeline's logging, metrics, span and output checks.
            out = await run_stage(stage, query, converted.candidates)
        except StageFailed as exc:
            # A postprocessor's contract: GraphFuse errors (bad node data, ...) surface as themselves;
            # any other failure stays a StageFailed naming the stage.
            if isinstance(exc.cause, GraphFuseError):
                raise exc.cause from None
            raise
        return from_candidates(out, nodes, converted, mapping)
