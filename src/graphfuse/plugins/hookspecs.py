"""The hooks a GraphFuse plugin implements.

A plugin is a module (or object) declared under the ``graphfuse`` entry-point group; each hook
receives ``register``, called once per component with a factory that runs only when the
component is requested (a stage factory takes ``(components: Components, **options)``, the
others ``**options``), and ``registered``, what the call registered so far (:class:`Registrations`).
Hooks are called through pluggy, with its semantics (wrappers, ``tryfirst``/``trylast``). One
``register_<kinds>`` hook per row of :data:`graphfuse.plugins.COMPONENT_KINDS`, written out
below (a test checks that they agree), plus :func:`register_presets`. Guide: ``docs/plugins.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

import pluggy

from ._registrations import Registrations

__all__ = [
    "Register",
    "RegisterPreset",
    "Registrations",
    "hookimpl",
    "hookspec",
    "register_cache_stores",
    "register_embedders",
    "register_entity_extractors",
    "register_generators",
    "register_graph_stores",
    "register_presets",
    "register_rerankers",
    "register_scorers",
    "register_stages",
    "register_token_counters",
    "register_vector_stores",
]

hookspec = pluggy.HookspecMarker("graphfuse")
"""Marks a hook specification (used by GraphFuse itself)."""

hookimpl = pluggy.HookimplMarker("graphfuse")
"""Marks a plugin's hook implementation."""

Register = Callable[[str, Callable[..., Any]], None]
"""The callback each component hook receives: ``register(name, factory)``."""


class RegisterPreset(Protocol):
    """The callback :func:`register_presets` receives.

    ``register(name, factory, needs=..., uses=..., description=...)``: ``factory`` is a callable
    ``factory(**inputs) -> Pipeline`` or a ``"module:attribute"`` string imported on first build;
    ``needs`` the inputs the preset cannot do without and ``uses`` the ones it takes when
    available (see :data:`graphfuse.presets.INPUTS`).
    """

    def __call__(
        self,
        name: str,
        factory: Callable[..., Any] | str,
        *,
        needs: Iterable[str] = ...,
        uses: Iterable[str] = ...,
        description: str = ...,
    ) -> None: ...


@hookspec
def register_stages(register: Register, registered: Registrations) -> None:
    """Register stage factories: ``factory(components: Components, **options) -> Stage``.

    A built stage must have: name, run.
    """


@hookspec
def register_scorers(register: Register, registered: Registrations) -> None:
    """Register scorer factories: ``factory(**options) -> Scorer``.

    A built scorer must have: score.
    """


@hookspec
def register_graph_stores(register: Register, registered: Registrations) -> None:
    """Register graph store factories: ``factory(**options) -> GraphStore``.

    A built graph store must have: store_documents, get_documents, related, pagerank, close.
    """


@hookspec
def register_vector_stores(register: Register, registered: Registrations) -> None:
    """Register vector store factories: ``factory(**options) -> VectorStore``.

    A built vector store must have: dimension, upsert, search, delete, count, close.
    """


@hookspec
def register_embedders(register: Register, registered: Registrations) -> None:
    """Register embedder factories: ``factory(**options) -> Embedder``.

    A built embedder must have: dimension, embed_documents, embed_query.
    """


@hookspec
def register_rerankers(register: Register, registered: Registrations) -> None:
    """Register reranker factories: ``factory(**options) -> Reranker``.

    A built reranker must have: rerank.
    """


@hookspec
def register_cache_stores(register: Register, registered: Registrations) -> None:
    """Register cache store factories: ``factory(**options) -> CacheStore``.

    A built cache store must have: get, get_many, set, set_many, delete, close.
    """


@hookspec
def register_token_counters(register: Register, registered: Registrations) -> None:
    """Register token counter factories: ``factory(**options) -> TokenCounter``.

    A built token counter must have: name, count.
    """


@hookspec
def register_generators(register: Register, registered: Registrations) -> None:
    """Register generator factories: ``factory(**options) -> Generator``.

    A built generator must have: agenerate.
    """


@hookspec
def register_entity_extractors(register: Register, registered: Registrations) -> None:
    """Register entity extractor factories: ``factory(**options) -> EntityExtractor``.

    A built entity extractor must have: extract.
    """


@hookspec
def register_presets(register: RegisterPreset, registered: Registrations) -> None:
    """Register presets: named pipelines built from a store's components by name.

    ::

        @hookimpl
        def register_presets(register):
            register("recent_first", "my_plugin.presets:recent_first", needs=("vector_store", "embedder"))

    The CLI (``graphfuse query --preset``), ``graphfuse eval --pipeline`` and the integrations
    build any registered preset by name; the catalogue supplies what the preset declares it
    needs (:func:`graphfuse.presets.abuild`).
    """
