"""The hydrate stage: load full documents for id-only candidates in one batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import GraphStore, RunContext
from .._core._traits import StageTraits
from .._core._types import STATE_KEY, Candidate, Query
from .._retrieval._run_documents import load_documents
from ..validation import check_options
from ._named import NamedStage

__all__ = ["Hydrate"]


class Hydrate(NamedStage):
    """Replace id-only candidates by their full documents from the graph store, keeping signals.

    At most one ``get_documents`` call per run, with the query's filter, for the documents not
    loaded earlier in the same pipeline run (the run context's ``graphfuse.documents``: a
    document read by an earlier hydrate stage is not read again). Candidates that already
    have content are not fetched again, but the query's filter is still checked against their
    metadata. Candidates whose document no longer exists, fails the filter, or is marked
    ``pending`` by an unfinished index run (metadata ``graphfuse_state``) are dropped.
    Order is kept. No signal, no per-call options.

    ``parents`` (a metadata key, e.g. ``"parent_id"``): in the same call, also read the
    documents that key names on the candidates that already have content and are not
    candidates themselves, into the run's documents only (they are not returned): the pages a
    :class:`~graphfuse.stages.ParentAggregation` with ``keep="parent"`` further on folds those
    chunks into, which the hydrate stage after it then finds loaded instead of reading them.
    """

    traits = StageTraits(reads_query=False)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_graph_store", "_parents")

    def __init__(self, graph_store: GraphStore, *, name: str = "hydrate", parents: str | None = None) -> None:
        if not callable(getattr(graph_store, "get_documents", None)):
            raise InvalidInput(f"graph_store must be a GraphStore (with 'get_documents'), got {graph_store!r}")
        if parents is not None and (not isinstance(parents, str) or not parents):
            raise InvalidInput(f"parents must be a non-empty metadata key or None, got {parents!r}")
        self._graph_store = graph_store
        self._parents = parents
        self._set_names(name)

    @property
    def graph_store(self) -> GraphStore:
        """The graph store this stage reads documents from."""
        return self._graph_store

    @property
    def parents(self) -> str | None:
        """The metadata key naming the parents read ahead into the run's documents, or ``None``."""
        return self._parents

    def __repr__(self) -> str:
        if self._parents is not None:
            return f"Hydrate(name={self._name!r}, parents={self._parents!r})"
        return f"Hydrate(name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Hydrate takes no per-call options."""
        check_options(self._name, options, ())

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.check_options(query.options.get(self._name, {}))
        wanted = [c.id for c in candidates if c.document.content is None]
        ahead = _parents_of(candidates, self._parents) if self._parents is not None else []
        loaded = (
            await load_documents(self._graph_store, [*wanted, *ahead], context, filter=query.filter)
            if wanted or ahead
            else {}
        )
        out: list[Candidate] = []
        for c in candidates:
            if c.document.content is not None:
                if _visible(c.document.metadata) and (
                    query.filter is None or query.filter.matches(c.document.metadata)
                ):
                    out.append(c)
                continue
            doc = loaded.get(c.id)
            if doc is not None and _visible(doc.metadata):
                out.append(c.with_document(doc))
        return out


def _parents_of(candidates: Sequence[Candidate], key: str) -> list[str]:
    """The parents ``key`` names on the hydrated candidates that are not candidates themselves."""
    present = {c.id for c in candidates}
    ahead: dict[str, None] = {}
    for c in candidates:
        if c.document.content is None:
            continue
        parent = c.document.metadata.get(key)
        if isinstance(parent, str) and parent and parent not in present:
            ahead[parent] = None
    return list(ahead)


def _visible(metadata: Mapping[str, Any]) -> bool:
    # An unfinished index run's document: its vectors or relations may be missing or stale.
    return metadata.get(STATE_KEY) != "pending"
