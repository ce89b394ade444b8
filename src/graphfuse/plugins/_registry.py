"""The component registry: loads plugins through pluggy and builds components by name.

Each entry point is loaded and registered with pluggy on its own; each ``register_*`` hook is
then called once through ``pm.hook`` (wrappers, ``tryfirst``/``trylast`` as pluggy does them).
Loading never raises: a plugin whose entry point fails to import, or whose hook raises, is kept
with its error (shown by :meth:`Registry.plugins` and ``graphfuse plugins``) and the others load
normally. The error is raised, as :class:`~graphfuse.PluginError` chained from the original,
only when a component that plugin would provide is requested.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar, overload

import pluggy

from .. import __version__
from .._core._errors import AlreadyExists, GraphFuseError, InvalidInput, NotFound, PluginError
from .._core._protocols import Stage
from . import hookspecs
from ._components import Components
from ._hookcall import Attribution, attributed
from ._kinds import COMPONENT_KINDS, STAGE, ComponentKind, kind_named
from ._presets import Preset
from ._registrations import Registrations

__all__ = ["ENTRY_POINT_GROUP", "KINDS", "Kind", "PluginInfo", "RegisteredName", "Registry", "get_registry"]

T = TypeVar("T")

logger = logging.getLogger("graphfuse.plugins")

ENTRY_POINT_GROUP = "graphfuse"
"""The entry-point group plugins register their module under (``[project.entry-points.graphfuse]``)."""
BUILTINS = "builtins"
_BUILTINS_MODULE = "graphfuse._builtins"
ALLOW_ENV = "GRAPHFUSE_LOAD_PLUGINS"

Kind = str
"""A component kind's name: one of :data:`KINDS` (the rows of :data:`~graphfuse.plugins.COMPONENT_KINDS`)."""

KINDS: tuple[str, ...] = tuple(k.name for k in COMPONENT_KINDS)
"""Every component kind's name, from the component-kind table."""

PRESET = "preset"
_HOOKS: dict[str, str] = {k.hook: k.name for k in COMPONENT_KINDS} | {"register_presets": PRESET}


@dataclass(frozen=True)
class PluginInfo:
    """One loaded (or failed) plugin, as ``graphfuse plugins`` lists it.

    ``name`` is the entry-point name (``builtins`` for GraphFuse's own components),
    ``version`` its distribution's version, ``hooks`` the hooks it implements, ``registers``
    the names it provides per kind, ``error`` why it failed (``None`` when it loaded).
    ``clashes`` lists the names it registers that another plugin registers too, as
    ``"<kind> '<name>' (also registered by 'other')"``: the plugin loaded, but those names are
    ambiguous (using one raises :class:`~graphfuse.PluginError`); a clash is not a load error.
    """

    name: str
    version: str | None
    hooks: tuple[str, ...] = ()
    registers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None
    clashes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name,
            "version": self.version,
            "hooks": list(self.hooks),
            "registers": {k: list(v) for k, v in self.registers.items()},
            "error": self.error,
            "clashes": list(self.clashes),
        }


class RegisteredName(str):
    """A name from :meth:`Registry.names`: a ``str`` that also says who registers it.

    ``providers`` are the plugins registering the name; ``ambiguous`` is true when there is
    more than one (using the name then raises :class:`~graphfuse.PluginError`).
    """

    providers: tuple[str, ...]

    def __new__(cls, name: str, providers: tuple[str, ...]) -> RegisteredName:
        obj = super().__new__(cls, name)
        obj.providers = providers
        return obj

    @property
    def ambiguous(self) -> bool:
        """Whether more than one plugin registers this name."""
        return len(self.providers) > 1

    def describe(self) -> str:
        """The name, with ``(ambiguous: 'a', 'b')`` when several plugins register it."""
        if not self.ambiguous:
            return str(self)
        return f"{self} (ambiguous: {', '.join(map(repr, self.providers))})"


@dataclass
class _Entry:
    factory: Any  # a component factory, or a Preset
    plugin: str
    replaced_by: str | None = None  # the plugin whose hook wrapper replaced the factory

    @property
    def source(self) -> str:
        """``plugin 'x'``, and who replaced its factory if one did (for messages)."""
        if self.replaced_by is None or self.replaced_by == self.plugin:
            return f"plugin {self.plugin!r}"
        return f"plugin {self.plugin!r} (factory replaced by plugin {self.replaced_by!r})"


@dataclass
class _Plugin:
    name: str
    version: str | None
    obj: object | None = None
    stand_in: object | None = None  # what pluggy holds for it (see _hookcall.attributed)
    hooks: tuple[str, ...] = ()
    registers: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    cause: BaseException | None = None
    aliases: frozenset[str] = frozenset()
    clashes: list[str] = field(default_factory=list)


@dataclass
class _State:
    plugins: list[_Plugin]
    table: dict[tuple[str, str], _Entry]
    conflicts: dict[tuple[str, str], list[str]]
    failed_names: dict[tuple[str, str], _Plugin]


def _check_kind(kind: object) -> ComponentKind[Any]:
    known = kind_named(kind)
    if known is None:
        raise InvalidInput(f"unknown component kind {kind!r}; kinds are: {', '.join(k.name for k in COMPONENT_KINDS)}")
    return known


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _allow_list() -> set[str] | None:
    raw = os.environ.get(ALLOW_ENV)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _distribution_version(ep: importlib.metadata.EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


def _builtins_version() -> str:
    try:
        return importlib.metadata.version("graphfuse")
    except importlib.metadata.PackageNotFoundError:
        return __version__


class Registry:
    """Every component the installed plugins provide, by kind and name.

    Built by :func:`get_registry` (one per process, loaded on first use). Kinds are
    ``stage``, ``scorer``, ``graph_store``, ``vector_store``, ``embedder``, ``reranker`` and
    ``cache_store``. The environment variable ``GRAPHFUSE_LOAD_PLUGINS`` (a comma-separated
    list of entry-point names) limits which plugins load; an empty value loads only the
    built-ins, which always load.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: _State | None = None
        self._added_presets: dict[str, Preset] = {}

    def reload(self) -> None:
        """Forget every plugin and load them again (re-reading entry points and the allow-list)."""
        importlib.invalidate_caches()
        state = _load()
        with self._lock:
            self._state = state

    def _loaded(self) -> _State:
        state = self._state
        if state is None:
            with self._lock:
                if self._state is None:
                    self._state = _load()
                state = self._state
        return state

    def plugins(self) -> list[PluginInfo]:
        """Every plugin, loaded or failed; the built-ins first."""
        return [
            PluginInfo(
                p.name,
                p.version,
                p.hooks,
                MappingProxyType({k: tuple(sorted(v)) for k, v in sorted(p.registers.items())}),
                p.error,
                tuple(p.clashes),
            )
            for p in self._loaded().plugins
        ]

    def names(self, kind: Kind | ComponentKind[Any]) -> list[RegisteredName]:
        """The names registered for ``kind``, sorted, ambiguous ones included and marked.

        Each is a :class:`RegisteredName` (a ``str``) whose ``providers`` name the plugins
        registering it and whose ``ambiguous`` is true when there are several.
        """
        return _registered(self._loaded(), _check_kind(kind).name)

    @overload
    def create(self, kind: ComponentKind[T], name: str, /, **options: Any) -> T: ...
    @overload
    def create(self, kind: Kind, name: str, /, **options: Any) -> Any: ...

    def create(self, kind: Kind | ComponentKind[Any], name: str, /, **options: Any) -> Any:
        """Build the ``kind`` component registered as ``name`` with ``options``.

        ``kind`` is a row of the component-kind table (``graphfuse.plugins.EMBEDDER``: typed
        result) or its name (``"embedder"``). Stages need backends: use :meth:`build_stage`.
        Raises :class:`~graphfuse.NotFound` for an unknown name, :class:`~graphfuse.PluginError`
        when the providing plugin failed or two plugins claim the name,
        :class:`~graphfuse.InvalidInput` for bad options.
        """
        spec = _check_kind(kind)
        if spec is STAGE:
            raise InvalidInput("stages are built with build_stage(name, components, **options)")
        return self._build(spec, name, (), options)

    # ---- presets ------------------------------------------------------------------------------

    def presets(self) -> list[Preset]:
        """Every preset (registered by plugins through ``register_presets``, or added), by name."""
        state = self._loaded()
        found = {name: entry.factory for (kind, name), entry in state.table.items() if kind == PRESET}
        with self._lock:
            found.update(self._added_presets)
        return [found[name] for name in sorted(found)]

    def preset(self, name: str) -> Preset:
        """The preset ``name``; raises :class:`~graphfuse.InvalidInput` listing the known ones."""
        if not isinstance(name, str):
            raise InvalidInput(f"a preset name must be a string, got {name!r}")
        with self._lock:
            added = self._added_presets.get(name)
        if added is not None:
            return added
        state = self._loaded()
        if (PRESET, name) in state.conflicts or (PRESET, name) in state.failed_names:
            self._lookup(PRESET, name)  # raises the PluginError naming the plugins
        entry = state.table.get((PRESET, name))
        if entry is None:
            known = ", ".join(p.name for p in self.presets())
            raise InvalidInput(f"unknown preset {name!r}; known presets: {known}")
        preset: Preset = entry.factory
        return preset

    def add_preset(self, preset: Preset, *, replace: bool = False) -> None:
        """Add ``preset`` at run time (an application's own); kept across :meth:`reload`.

        Raises :class:`~graphfuse.AlreadyExists` when the name is taken, unless ``replace``.
        """
        if not isinstance(preset, Preset):
            raise InvalidInput(f"expected a graphfuse.plugins.Preset, got {type(preset).__name__}")
        taken = preset.name in {p.name for p in self.presets()}
        with self._lock:
            if taken and not replace:
                raise AlreadyExists(f"preset {preset.name!r} is already registered")
            self._added_presets[preset.name] = preset

    def build_stage(self, name: str, components: Components | None = None, /, **options: Any) -> Stage:
        """Build the stage registered as ``name`` over ``components`` (backends) with ``options``."""
        if components is None:
            components = Components()
        if not isinstance(components, Components):
            raise InvalidInput(f"components must be graphfuse.plugins.Components, got {type(components).__name__}")
        stage: Stage = self._build(STAGE, name, (components,), options)
        return stage

    def remove_preset(self, name: str) -> None:
        """Remove a preset added with :meth:`add_preset`; raises :class:`~graphfuse.NotFound` otherwise."""
        with self._lock:
            if self._added_presets.pop(name, None) is None:
                raise NotFound(f"no preset {name!r} was added at run time (plugins' presets cannot be removed)")

    def _build(self, kind: ComponentKind[Any], name: str, args: tuple[Any, ...], options: Mapping[str, Any]) -> Any:
        entry = self._lookup(kind.name, name)
        what = f"{kind.label} {name!r}"
        try:
            obj = entry.factory(*args, **options)
        except InvalidInput as exc:
            if str(exc).startswith(what):
                raise
            raise InvalidInput(f"{what}: {exc}") from exc
        except TypeError as exc:
            # Almost always an option the factory does not take.
            raise InvalidInput(f"{what}: {exc}") from exc
        except GraphFuseError:
            raise
        except Exception as exc:
            raise PluginError(f"{what} from {entry.source} failed to build: {_describe(exc)}") from exc
        missing = [m for m in kind.members if not _has_member(obj, m)]
        if missing:
            raise PluginError(
                f"{what} from {entry.source} built a {type(obj).__name__}, "
                f"which lacks {', '.join(missing)}: not a {kind.label}"
            )
        return obj

    def _lookup(self, kind: str, name: str) -> _Entry:
        if not isinstance(name, str) or not name:
            raise InvalidInput(f"a {kind.replace('_', ' ')} name must be a non-empty string, got {name!r}")
        state = self._loaded()
        key = (kind, name)
        if key in state.conflicts:
            owners = state.conflicts[key]
            raise PluginError(
                f"{kind.replace('_', ' ')} {name!r} is registered by more than one plugin: "
                f"{', '.join(map(repr, owners))}; uninstall one, or limit plugins with {ALLOW_ENV}"
            )
        entry = state.table.get(key)
        if entry is not None:
            return entry
        failed = state.failed_names.get(key) or next(
            (p for p in state.plugins if p.error is not None and name in p.aliases), None
        )
        if failed is not None:
            raise PluginError(
                f"{kind.replace('_', ' ')} {name!r} would come from plugin {failed.name!r}, which failed to load: "
                f"{failed.error}"
            ) from failed.cause
        known = [n.describe() for n in _registered(state, kind)]
        message = f"no {kind.replace('_', ' ')} named {name!r}; known: {', '.join(known) if known else 'none'}"
        broken = [p for p in state.plugins if p.error is not None]
        if broken:
            message += (
                "; these plugins failed to load and may provide it: "
                + "; ".join(f"{p.name!r} ({p.error})" for p in broken)
                + " (see `graphfuse plugins`)"
            )
        raise NotFound(message)


def _registered(state: _State, kind: str) -> list[RegisteredName]:
    out = [RegisteredName(n, (e.plugin,)) for (k, n), e in state.table.items() if k == kind]
    out += [RegisteredName(n, tuple(owners)) for (k, n), owners in state.conflicts.items() if k == kind]
    return sorted(out)


def _has_member(obj: object, name: str) -> bool:
    try:
        inspect.getattr_static(obj, name)
    except AttributeError:
        return False
    return True


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return sorted(eps, key=lambda ep: (ep.name, ep.value))


def _load() -> _State:
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    attribution = Attribution()
    plugins: list[_Plugin] = []

    builtins = _Plugin(BUILTINS, _builtins_version())
    try:
        builtins.obj = importlib.import_module(_BUILTINS_MODULE)
    except Exception as exc:  # pragma: no cover - a broken install
        builtins.error, builtins.cause = _describe(exc), exc
    plugins.append(builtins)

    allow = _allow_list()
    seen: dict[str, str] = {BUILTINS: "graphfuse"}
    for ep in _entry_points():
        if ep.value.strip() == _BUILTINS_MODULE:
            continue  # the core's own entry point: loaded above, always
        if allow is not None and ep.name not in allow:
            continue
        dist_name, version = _distribution_version(ep)
        plugin = _Plugin(ep.name, version)
        plugin.aliases = frozenset(
            {ep.name} | ({dist_name, dist_name.removeprefix("graphfuse-")} if dist_name else set())
        )
        plugins.append(plugin)
        if ep.name in seen:
            plugin.error = (
                f"entry point name {ep.name!r} is also used by distribution {seen[ep.name]!r}; "
                "plugin names must be unique"
            )
            continue
        seen[ep.name] = dist_name or ep.value
        try:
            plugin.obj = ep.load()
        except Exception as exc:
            plugin.error, plugin.cause = _describe(exc), exc
            logger.info("graphfuse plugin %r failed to load: %s", ep.name, plugin.error)

    # One plugin at a time into pluggy, as a stand-in whose hook implementations run under
    # the plugin's name (see _hookcall): an entry point that fails to import, or a plugin
    # pluggy refuses, costs only that plugin.
    for plugin in plugins:
        if plugin.obj is None:
            continue
        try:
            plugin.stand_in = attributed(pm, plugin.obj, plugin.name, attribution)
            pm.register(plugin.stand_in, name=plugin.name)
        except Exception as exc:
            plugin.obj, plugin.stand_in, plugin.error, plugin.cause = None, None, _describe(exc), exc
            continue
        callers = pm.get_hookcallers(plugin.stand_in) or []
        unknown = sorted(c.name for c in callers if c.spec is None)
        plugin.hooks = tuple(sorted(c.name for c in callers if c.spec is not None))
        if unknown:
            plugin.error = f"implements unknown hook(s) {', '.join(unknown)}; known hooks: {', '.join(_HOOKS)}"
            pm.unregister(plugin.stand_in)
            plugin.obj = plugin.stand_in = None
    return _register(pm, plugins, attribution)


def _register(pm: pluggy.PluginManager, plugins: list[_Plugin], attribution: Attribution) -> _State:
    """Call every ``register_*`` hook through pluggy; a plugin whose implementation fails is
    dropped (its error kept, the names it had registered remembered as its) and the hooks are
    called again without it, so what the others register never depends on a broken plugin."""
    by_name = {p.name: p for p in plugins}
    failed_names: dict[tuple[str, str], _Plugin] = {}
    while True:
        calls = _call_hooks(pm, attribution)
        failures = dict(attribution.failures)
        if not failures:
            return _collect(plugins, calls, failed_names)
        for name, exc in failures.items():
            plugin = by_name[name]
            plugin.error, plugin.cause = _describe(exc), exc
            logger.info("graphfuse plugin %r failed to register its components: %s", name, plugin.error)
            for kind, registrations in calls:
                for owner, registered, _, _ in registrations._entries():
                    if owner == name:
                        failed_names.setdefault((kind, registered), plugin)
            if plugin.stand_in is not None:
                pm.unregister(plugin.stand_in)
            plugin.obj = plugin.stand_in = None


def _call_hooks(pm: pluggy.PluginManager, attribution: Attribution) -> list[tuple[str, Registrations]]:
    """One call of each hook (until one fails); what each call registered."""
    attribution.failures.clear()
    calls: list[tuple[str, Registrations]] = []
    for hook_name, kind in _HOOKS.items():
        registrations = Registrations(kind, attribution)
        register = registrations._preset_callback() if kind == PRESET else registrations._component_callback()
        calls.append((kind, registrations))
        try:
            getattr(pm.hook, hook_name)(register=register, registered=registrations)
        except Exception as exc:
            if not attribution.failures:  # every implementation runs attributed: not a plugin's
                raise PluginError(f"calling hook {hook_name} failed: {_describe(exc)}") from exc
        finally:
            registrations._close()
        if attribution.failures:
            break
    return calls


def _collect(
    plugins: list[_Plugin], calls: list[tuple[str, Registrations]], failed_names: dict[tuple[str, str], _Plugin]
) -> _State:
    by_name = {p.name: p for p in plugins}
    order = {p.name: i for i, p in enumerate(plugins)}
    table: dict[tuple[str, str], _Entry] = {}
    owners: dict[tuple[str, str], list[str]] = {}
    for kind, registrations in calls:
        for plugin, name, factory, replaced_by in registrations._entries():
            by_name[plugin].registers.setdefault(kind, []).append(name)
            owners.setdefault((kind, name), []).append(plugin)
            table.setdefault((kind, name), _Entry(factory, plugin, replaced_by))
    conflicts = {key: sorted(names, key=order.__getitem__) for key, names in owners.items() if len(names) > 1}
    for (kind, name), names in conflicts.items():
        del table[(kind, name)]
        for owner in names:
            # Both plugins loaded: the name is ambiguous, which is no load error of either.
            others = ", ".join(repr(n) for n in names if n != owner)
            by_name[owner].clashes.append(f"{kind.replace('_', ' ')} {name!r} (also registered by {others})")
    return _State(plugins, table, conflicts, failed_names)


_registry: Registry | None = None
_registry_lock = threading.Lock()


def get_registry() -> Registry:
    """The process-wide registry (plugins load on first use, thread-safe)."""
    global _registry
    if _registry is None:
        with _registry_lock:
            if _registry is None:
                _registry = Registry()
    return _registry
