"""The hooks a GraphFuse plugin implements.

A plugin is a module (or object) declared under the ``graphfuse`` entry-point group. Each hook
receives a ``register`` callback; call it once per component the plugin provides::

    from graphfuse.plugins import hookimpl

    @hookimpl
    def register_stages(register):
        register("keyword_boost", make_keyword_boost)

Factories are called only when the component is requested, so import heavy dependencies
inside them. A stage factory takes ``(components: Components, **options)``; every other
factory takes ``**options``. GraphFuse's own built-ins are registered through these same hooks
(module ``graphfuse._builtins``).

There is one ``register_<kinds>`` hook per row of the component-kind table
(:data:`graphfuse.plugins.COMPONENT_KINDS`): ``register_stages``, ``register_scorers``,
``register_graph_stores``, ``register_vector_stores``, ``register_embedders``,
``register_rerankers``, ``register_cache_stores`` (and any kind added to the table), plus
:func:`register_presets` for named pipelines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

import pluggy

from ._kinds import COMPONENT_KINDS, ComponentKind

__all__ = [
    "Register",
    "RegisterPreset",
    "hookimpl",
    "hookspec",
    "register_presets",
    *(kind.hook for kind in COMPONENT_KINDS),
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


def _component_hook(kind: ComponentKind[Any]) -> Callable[[Register], None]:
    def hook(register: Register) -> None:
        pass

    hook.__name__ = hook.__qualname__ = kind.hook
    hook.__module__ = __name__
    hook.__doc__ = (
        f"Register {kind.label} factories: ``factory{kind.factory_takes} -> {kind.protocol.__name__}``.\n\n"
        f"A built {kind.label} must have: {', '.join(kind.members)}."
    )
    marked: Callable[[Register], None] = hookspec(hook)
    return marked


for _kind in COMPONENT_KINDS:
    globals()[_kind.hook] = _component_hook(_kind)
del _kind


@hookspec
def register_presets(register: RegisterPreset) -> None:
    """Register presets: named pipelines built from a store's components by name.

    ::

        @hookimpl
        def register_presets(register):
            register("recent_first", "my_plugin.presets:recent_first", needs=("vector_store", "embedder"))

    The CLI (``graphfuse query --preset``), ``graphfuse eval --pipeline`` and the integrations
    build any registered preset by name; the catalogue supplies what the preset declares it
    needs (:func:`graphfuse.presets.abuild`).
    """
