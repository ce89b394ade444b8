"""The backends a stage factory may use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, overload

from .._core._errors import InvalidInput
from .._core._protocols import CacheStore, Embedder, GraphStore, Reranker, VectorStore

__all__ = ["ComponentName", "Components"]

ComponentName = Literal["graph_store", "vector_store", "embedder", "reranker", "cache_store"]
"""The name of a backend :meth:`Components.require` can be asked for."""


@dataclass(frozen=True)
class Components:
    """The backends handed to every stage factory; each is optional.

    A factory takes what it needs with :meth:`require`, which names the missing piece::

        def make_my_stage(components: Components, **options) -> Stage:
            return MyStage(components.require("graph_store", by="stage 'my_stage'"), **options)
    """

    graph_store: GraphStore | None = None
    vector_store: VectorStore | None = None
    embedder: Embedder | None = None
    reranker: Reranker | None = None
    cache_store: CacheStore | None = None

    @overload
    def require(self, name: Literal["graph_store"], *, by: str) -> GraphStore: ...
    @overload
    def require(self, name: Literal["vector_store"], *, by: str) -> VectorStore: ...
    @overload
    def require(self, name: Literal["embedder"], *, by: str) -> Embedder: ...
    @overload
    def require(self, name: Literal["reranker"], *, by: str) -> Reranker: ...
    @overload
    def require(self, name: Literal["cache_store"], *, by: str) -> CacheStore: ...

    def require(self, name: ComponentName, *, by: str) -> GraphStore | VectorStore | Embedder | Reranker | CacheStore:
        """The component ``name``; raises :class:`~graphfuse.InvalidInput` naming it and ``by`` if absent."""
        if name not in ("graph_store", "vector_store", "embedder", "reranker", "cache_store"):
            raise InvalidInput(f"unknown component {name!r}")
        value: GraphStore | VectorStore | Embedder | Reranker | CacheStore | None = getattr(self, name)
        if value is None:
            raise InvalidInput(f"{by} needs a {name}, but none was given (pass Components({name}=...))")
        return value
