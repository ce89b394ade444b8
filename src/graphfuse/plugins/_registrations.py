"""What one call of a ``register_*`` hook registers: the ``register`` callback and its view."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._core._errors import InvalidInput, PluginError
from ._presets import Preset

if TYPE_CHECKING:
    from ._hookcall import Attribution
    from .hookspecs import Register, RegisterPreset

__all__ = ["Registrations"]

PRESET = "preset"

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")


@dataclass
class _Record:
    plugin: str
    name: str
    value: Any  # a component factory, or a Preset
    replaced_by: str | None = None


class Registrations(Mapping[str, Any]):
    """What a ``register_*`` hook call has registered so far: the ``registered`` argument of each hook.

    A read-only mapping from each name registered during this call to its factory (for
    ``register_presets``, its :class:`~graphfuse.plugins.Preset`), in registration order.
    pluggy runs the implementations in its order (``tryfirst`` ones first, ``trylast`` ones
    last), so an implementation sees what ran before it; a hook wrapper sees, after its
    ``yield``, what every other implementation registered. :meth:`providers` names the plugins
    that registered a name; :meth:`replace` swaps a name's factory (to wrap or override one).
    """

    def __init__(self, kind: str, attribution: Attribution) -> None:
        self.kind = kind
        self._attribution = attribution
        self._records: list[_Record] = []
        self._open = True

    # ---- the mapping ----------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        for record in self._records:
            if record.name == name:
                return record.value
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(r.name for r in self._records))

    def __len__(self) -> int:
        return len({r.name for r in self._records})

    def __repr__(self) -> str:
        return f"Registrations({self.kind}: {', '.join(self) or 'none'})"

    def providers(self, name: str) -> tuple[str, ...]:
        """The plugins that registered ``name`` in this call (several: the name is ambiguous)."""
        return tuple(r.plugin for r in self._records if r.name == name)

    def replace(self, name: str, factory: Callable[..., Any] | str) -> None:
        """Give ``name`` another factory; the plugins that registered it still provide it.

        For a preset, ``factory`` may be a ``"module:attribute"`` string, and the preset keeps
        what it declared it needs and uses. Raises :class:`~graphfuse.PluginError` when nothing
        registered ``name`` (yet: a wrapper replaces after its ``yield``) or ``factory`` is
        not one; the plugin whose implementation called it then fails to load.
        """
        plugin = self._caller("replace")
        found = [r for r in self._records if r.name == name]
        if not found:
            raise PluginError(
                f"plugin {plugin!r} replaced {self._label} {name!r}, which nothing registered "
                f"(registered so far: {', '.join(self) or 'none'})"
            )
        for record in found:
            if self.kind == PRESET:
                old: Preset = record.value
                record.value = self._preset(
                    plugin, name, factory, needs=old.needs, uses=old.uses, description=old.description, owner=old.plugin
                )
            else:
                record.value = self._factory(plugin, name, factory)
            record.replaced_by = plugin

    # ---- for the registry: the register callbacks, the end of the call, what was registered ----

    def _component_callback(self) -> Register:
        """The ``register(name, factory)`` callback of a component hook."""

        def register(name: str, factory: Callable[..., Any]) -> None:
            plugin = self._caller("register")
            if not isinstance(name, str) or not _NAME.match(name):
                raise PluginError(
                    f"plugin {plugin!r} registered an invalid {self._label} name {name!r}: use letters, "
                    "digits, '_', '.' or '-', starting with a letter or '_'"
                )
            self._add(plugin, name, self._factory(plugin, name, factory))

        return register

    def _preset_callback(self) -> RegisterPreset:
        """The ``register(name, factory, needs=..., uses=..., description=...)`` callback of ``register_presets``."""

        def register(
            name: str,
            factory: Callable[..., Any] | str,
            *,
            needs: Iterable[str] = (),
            uses: Iterable[str] = (),
            description: str = "",
        ) -> None:
            plugin = self._caller("register")
            preset = self._preset(plugin, name, factory, needs=needs, uses=uses, description=description, owner=plugin)
            self._add(plugin, preset.name, preset)

        return register

    def _close(self) -> None:
        """End of the hook call: ``register`` and ``replace`` refuse from now on."""
        self._open = False

    def _entries(self) -> list[tuple[str, str, Any, str | None]]:
        """``(plugin, name, factory or preset, replaced_by)`` for each registration, in order."""
        return [(r.plugin, r.name, r.value, r.replaced_by) for r in self._records]

    # ---- helpers ------------------------------------------------------------------------------------

    @property
    def _label(self) -> str:
        return self.kind.replace("_", " ")

    def _caller(self, what: str) -> str:
        plugin = self._attribution.current
        if not self._open or plugin is None:
            raise PluginError(f"{what} for {self._label}s was called outside a hook call (keep no reference to it)")
        return plugin

    def _add(self, plugin: str, name: str, value: Any) -> None:
        if any(r.plugin == plugin and r.name == name for r in self._records):
            raise PluginError(f"plugin {plugin!r} registered {self._label} {name!r} twice")
        self._records.append(_Record(plugin, name, value))

    def _factory(self, plugin: str, name: str, factory: object) -> Callable[..., Any]:
        if not callable(factory):
            raise PluginError(f"plugin {plugin!r} registered {self._label} {name!r} with a non-callable")
        return factory

    @staticmethod
    def _preset(
        plugin: str,
        name: str,
        factory: Callable[..., Any] | str,
        *,
        needs: Iterable[str],
        uses: Iterable[str],
        description: str,
        owner: str,
    ) -> Preset:
        try:
            return Preset.declare(name, factory, needs=needs, uses=uses, description=description, plugin=owner)
        except InvalidInput as exc:
            raise PluginError(f"plugin {plugin!r} registered an invalid preset: {exc}") from exc
