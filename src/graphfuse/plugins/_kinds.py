"""The table of component kinds: one entry per kind, everything else follows from it.

The hook a plugin implements (``register_<plural>``), the members a built component must
have, the registry's accepted kind names and the typed :meth:`Registry.create
<graphfuse.plugins.Registry.create>` all come from :data:`COMPONENT_KINDS`. Adding a kind is
one line here::

    GENERATOR: ComponentKind[Generator] = _kind("generator", "generators", Generator, ("agenerate",))

That line adds the hook ``register_generators`` to :mod:`graphfuse.plugins.hookspecs`, lets
``Registry.create(GENERATOR, name)`` return a ``Generator`` for the type checker, and makes
``Registry.create("generator", name)`` check the built object has ``agenerate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .._core._protocols import (
    CacheStore,
    Embedder,
    EntityExtractor,
    Generator,
    GraphStore,
    Reranker,
    Scorer,
    Stage,
    TokenCounter,
    VectorStore,
)

__all__ = [
    "CACHE_STORE",
    "COMPONENT_KINDS",
    "EMBEDDER",
    "ENTITY_EXTRACTOR",
    "GENERATOR",
    "GRAPH_STORE",
    "RERANKER",
    "SCORER",
    "STAGE",
    "TOKEN_COUNTER",
    "VECTOR_STORE",
    "ComponentKind",
    "kind_named",
]

T = TypeVar("T")


@dataclass(frozen=True)
class ComponentKind(Generic[T]):
    """One kind of component: its name, hook, interface and required members.

    ``name`` is the kind's registry name (``"embedder"``); ``hook`` the hook a plugin implements
    (``"register_embedders"``); ``protocol`` the interface the built object satisfies (used for
    typing and documentation); ``members`` the attributes checked on every built object
    (statically, so a property that would load a model is not evaluated); ``factory_takes`` what
    a factory receives, for the hook's documentation.
    """

    name: str
    hook: str
    protocol: Any
    members: tuple[str, ...]
    factory_takes: str = "**options"

    @property
    def label(self) -> str:
        """The kind's name for messages (``"graph store"``)."""
        return self.name.replace("_", " ")

    def __str__(self) -> str:
        return self.name


COMPONENT_KINDS: list[ComponentKind[Any]] = []
"""Every kind, in registration order (extended by :func:`_kind`)."""


def _kind(
    name: str, plural: str, protocol: Any, members: tuple[str, ...], factory_takes: str = "**options"
) -> ComponentKind[Any]:
    # ``protocol`` is typed Any: mypy refuses a Protocol class where ``type[T]`` is expected, so
    # each row names its type parameter in its annotation instead.
    kind: ComponentKind[Any] = ComponentKind(name, f"register_{plural}", protocol, members, factory_takes)
    COMPONENT_KINDS.append(kind)
    return kind


# ---- the table: one row per kind, each with its docstring ------------------------------------
# fmt: off
STAGE: ComponentKind[Stage] = _kind("stage", "stages", Stage, ("name", "run"), "(components: Components, **options)")
"""Pipeline stages (``register_stages``; factories take the :class:`Components` and the stage's options)."""
SCORER: ComponentKind[Scorer] = _kind("scorer", "scorers", Scorer, ("score",))
"""Scorers (``register_scorers``)."""
GRAPH_STORE: ComponentKind[GraphStore] = _kind("graph_store", "graph_stores", GraphStore, ("store_documents", "get_documents", "related", "pagerank", "close"))  # noqa: E501
"""Graph stores (``register_graph_stores``)."""
VECTOR_STORE: ComponentKind[VectorStore] = _kind("vector_store", "vector_stores", VectorStore, ("dimension", "upsert", "search", "delete", "count", "close"))  # noqa: E501
"""Vector stores (``register_vector_stores``)."""
EMBEDDER: ComponentKind[Embedder] = _kind("embedder", "embedders", Embedder, ("dimension", "embed_documents", "embed_query"))  # noqa: E501
"""Embedders (``register_embedders``)."""
RERANKER: ComponentKind[Reranker] = _kind("reranker", "rerankers", Reranker, ("rerank",))
"""Rerankers (``register_rerankers``)."""
CACHE_STORE: ComponentKind[CacheStore] = _kind("cache_store", "cache_stores", CacheStore, ("get", "get_many", "set", "set_many", "delete", "close"))  # noqa: E501
"""Cache stores (``register_cache_stores``)."""
TOKEN_COUNTER: ComponentKind[TokenCounter] = _kind("token_counter", "token_counters", TokenCounter, ("name", "count"))
"""Token counters for context budgets (``register_token_counters``)."""
GENERATOR: ComponentKind[Generator] = _kind("generator", "generators", Generator, ("agenerate",))
"""Answer generators for comparisons (``register_generators``)."""
ENTITY_EXTRACTOR: ComponentKind[EntityExtractor] = _kind("entity_extractor", "entity_extractors", EntityExtractor, ("extract",))  # noqa: E501
"""Entity extractors for indexing (``register_entity_extractors``)."""
# fmt: on
# -------------------------------------------------------------------------------------------------


def kind_named(kind: object) -> ComponentKind[Any] | None:
    """The kind called ``kind`` (a name or a :class:`ComponentKind`), or ``None``."""
    for known in COMPONENT_KINDS:
        if kind is known or kind == known.name:
            return known
    return None
