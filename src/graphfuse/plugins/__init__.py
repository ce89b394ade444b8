"""Plugins: components found through pluggy entry points (group ``graphfuse``).

A plugin implements the ``register_*`` hooks of :mod:`graphfuse.plugins.hookspecs` (marked with
:data:`hookimpl`), one per kind of :data:`COMPONENT_KINDS`, called through pluggy (wrappers,
``tryfirst``/``trylast``; :class:`Registrations` is what a call registered); :func:`get_registry` is the
process-wide :class:`Registry` of every installed component, GraphFuse's built-ins included;
:func:`build_pipeline` and :func:`load_pipeline_spec` build pipelines from a declarative spec
and :func:`lazy_exports` lets a plugin package import its public names on first access. Guide:
``docs/plugins.md``.
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
from ._registrations import Registrations
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
    "Registrations",
    "Registry",
    "build_pipeline",
    "get_registry",
    "hookimpl",
    "lazy_exports",
    "load_pipeline_spec",
]
