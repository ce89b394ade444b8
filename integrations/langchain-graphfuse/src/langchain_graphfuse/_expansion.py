"""Graph expansion around any LangChain retriever."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, PrivateAttr, field_validator

import graphfuse.stages as gs
from graphfuse import GraphStore, MetadataFilter, run_sync
from graphfuse.validation import check_keywords

from ._documents import METADATA_KEY, DocumentMapping, combine_filters
from ._execution import run_stages_on_documents
from ._retriever import check_k

__all__ = ["GraphExpansionRetriever"]

_CALL_KNOBS = ("k", "filter", "depth", "max_expansion")
_IGNORED = ("verbose",)


class GraphExpansionRetriever(BaseRetriever):
    """Expand any LangChain retriever's documents through a GraphFuse graph store.

    The wrapped ``retriever`` runs first (as a child run: callbacks and traces nest under this
    retriever's run); its documents are the seeds, each identified by ``Document.id`` or, with
    ``id_key``, by ``metadata[id_key]``. Related documents within ``depth`` hops are appended,
    nearest first, with the ``graph`` signal (``decay ** distance``; seeds 1.0).

    ``filter`` is honoured everywhere: seeds whose metadata fails it are dropped, and the graph
    store applies it on every hop. ``unknown="error"`` refuses seeds the graph store does not
    hold (``"keep"``, the default, keeps them unexpanded). ``k`` caps the output (``None``: all).
    Per call: ``k``, ``filter`` (ANDed with the field's), ``depth``, ``max_expansion``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Runnable[str, list[Document]]
    graph_store: GraphStore
    depth: int = 2
    max_expansion: int = 100
    relation_types: list[str] | None = None
    id_key: str | None = None
    unknown: Literal["keep", "error"] = "keep"
    k: int | None = None
    filter: dict[str, Any] | None = None

    _stage: gs.GraphExpansion = PrivateAttr()
    _stage_name: str = PrivateAttr(default="graph")

    @field_validator("k")
    @classmethod
    def _valid_k(cls, value: int | None) -> int | None:
        return None if value is None else check_k(value)

    def model_post_init(self, context: Any, /) -> None:
        stage = gs.GraphExpansion(
            self.graph_store, depth=self.depth, max_expansion=self.max_expansion, relation_types=self.relation_types
        )
        self._stage = stage
        MetadataFilter.parse(self.filter)

    def _call(self, kwargs: Mapping[str, Any]) -> tuple[int | None, MetadataFilter | None, dict[str, Any]]:
        check_keywords(kwargs, _CALL_KNOBS, "GraphExpansionRetriever", hidden=_IGNORED)
        k = kwargs.get("k", self.k)
        options = {name: kwargs[name] for name in ("depth", "max_expansion") if name in kwargs}
        self._stage.check_options(options)
        return (None if k is None else check_k(k)), combine_filters(self.filter, kwargs.get("filter")), options

    async def _expand(
        self, query: str, docs: list[Document], k: int | None, filter: MetadataFilter | None, options: dict[str, Any]
    ) -> list[Document]:
        if filter is not None:
            docs = [d for d in docs if filter.matches({n: v for n, v in d.metadata.items() if n != METADATA_KEY})]
        out = await run_stages_on_documents(
            [self._stage],
            docs,
            query=query,
            needs_query=False,
            filter=filter,
            mapping=DocumentMapping(id_key=self.id_key),
            what="GraphExpansionRetriever",
            graph_store=self.graph_store,
            unknown=self.unknown,
            options={self._stage_name: options} if options else None,
        )
        return out if k is None else out[:k]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        k, filter, options = self._call(kwargs)
        docs = self.retriever.invoke(query, config={"callbacks": run_manager.get_child()})
        return run_sync(self._expand(query, docs, k, filter, options))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        k, filter, options = self._call(kwargs)
        docs = await self.retriever.ainvoke(query, config={"callbacks": run_manager.get_child()})
        return await self._expand(query, docs, k, filter, options)
