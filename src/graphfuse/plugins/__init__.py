"""Plugins: components found through pluggy entry points (group ``graphfuse``).

- :mod:`graphfuse.plugins.hookspecs`: the ``register_*`` hooks a plugin implements.
- :data:`hookimpl`: the marker for a plugin's hook implementations.
- :func:`get_registry`: the process-wide :class:`Registry` of every installed component.
- :data:`COMPONENT_KINDS`: the table of component kinds (:class:`ComponentKind`); the hooks,
  the registry's kinds and its typed ``create`` follow from it.
- :class:`Preset` / :data:`INPUTS`: an entry of the preset catalogue (:mod:`graphfuse.presets`).
- :class:`Components`: the backends handed to stage factories.
- :func:`build_pipeline` / :func:`load_pipeline_spec`: pipelines from a declarative spec.
- :func:`lazy_exports`: public names a plugin package imports on first access.

GraphFuse's built-ins are registered through the same hooks, by ``graphfuse._builtins``.
"""

from ._components import ComponentName, Components
from ._kinds import (
    CACHE_STORE,
    COMPONENT_KINDS,
    EMBEDDER,
    ENTITY_EXTRACTOR,
    GENERATOR,
    GRAPH_STORE,
    RERANKER,
    SCORER,
    STAGE,
    TOKEN_COUNTER,
    VECTOR_STORE,
    ComponentKind,
)
from ._lazy import lazy_exports
from ._presets import INPUTS, Preset
from ._registry import ENTRY_POINT_GROUP, KINDS, Kind, PluginInfo, RegisteredName, Registry, get_registry
from ._spec import build_pipeline, load_pipeline_spec
from .hookspecs import Register, RegisterPreset, hookimpl

__all__ = [
    "CACHE_STORE",
    "COMPONENT_KINDS",
    "EMBEDDER",
    "ENTITY_EXTRACTOR",
    "ENTRY_POINT_GROUP",
    "GENERATOR",
    "GRAPH_STORE",
    "INPUTS",
    "KINDS",
    "RERANKER",
    "SCORER",
    "STAGE",
    "TOKEN_COUNTER",
    "VECTOR_STORE",
    "ComponentKind",
    "ComponentName",
    "Components",
    "Kind",
    "PluginInfo",
    "Preset",
    "Register",
    "RegisterPreset",
    "RegisteredName",
    "Registry",
    "build_pipeline",
    "get_registry",
    "hookimpl",
    "lazy_exports",
    "load_pipeline_spec",
]
