"""The hooks a GraphFuse plugin implements.

A plugin is a module (or object) declared under the ``graphfuse`` entry-point group. Each hook
receives a ``register(name, factory)`` callback; call it once per component the plugin provides::

    from graphfuse.plugins import hookimpl

    @hookimpl
    def register_stages(register):
        register("keyword_boost", make_keyword_boost)

Factories are called only when the component is requested, so import heavy dependencies
inside them. A stage factory takes ``(components: Components, **options)``; every other
factory takes ``**options``. GraphFuse's own built-ins are registered through these same hooks
(module ``graphfuse._builtins``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

__all__ = [
    "Register",
    "hookimpl",
    "hookspec",
    "register_cache_stores",
    "register_embedders",
    "register_generators",
    "register_graph_stores",
    "register_rerankers",
    "register_scorers",
    "register_stages",
    "register_vector_stores",
]

hookspec = pluggy.HookspecMarker("graphfuse")
"""Marks a hook specification (used by GraphFuse itself)."""

hookimpl = pluggy.HookimplMarker("graphfuse")
"""Marks a plugin's hook implementation."""

Register = Callable[[str, Callable[..., Any]], None]
"""The callback each hook receives: ``register(name, factory)``."""


@hookspec
def register_stages(register: Register) -> None:
    """Register stage factories: ``factory(components: Components, **options) -> Stage``.

    A factory that needs a backend it was not given raises :class:`~graphfuse.InvalidInput`
    (``components.require("graph_store", by=...)`` does that).
    """


@hookspec
def register_scorers(register: Register) -> None:
    """Register scorer factories: ``factory(**options) -> Scorer``."""


@hookspec
def register_graph_stores(register: Register) -> None:
    """Register graph store factories: ``factory(**options) -> GraphStore``."""


@hookspec
def register_vector_stores(register: Register) -> None:
    """Register vector store factories: ``factory(**options) -> VectorStore``."""


@hookspec
def register_embedders(register: Register) -> None:
    """Register embedder factories: ``factory(**options) -> Embedder``."""


@hookspec
def register_rerankers(register: Register) -> None:
    """Register reranker factories: ``factory(**options) -> Reranker``."""


@hookspec
def register_cache_stores(register: Register) -> None:
    """Register cache store factories: ``factory(**options) -> CacheStore``."""


@hookspec
def register_generators(register: Register) -> None:
    """Register generator factories: ``factory(**options) -> Generator`` (:mod:`graphfuse.compare`).

    ``graphfuse compare --llm NAME:MODEL`` builds ``NAME`` with ``model=MODEL``.
    """
