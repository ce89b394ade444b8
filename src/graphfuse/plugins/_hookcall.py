"""Calling the plugins' hooks through pluggy, each implementation under its plugin's name.

pluggy calls every implementation of a hook in one call: wrappers (``wrapper=True``, and the old
``hookwrapper=True``) around the others, ``tryfirst``/``trylast`` first and last, the rest the
last registered first, and only up to the first result that is not ``None`` for a hook declared
``firstresult``. The registry hands pluggy, for each plugin, a stand-in (:func:`attributed`)
holding the same hook implementations with the same options, so none of that changes; each
implementation of the stand-in runs with its plugin's name on the :class:`Attribution`'s stack
(a ``register(...)`` call is credited to the plugin whose code made it) and a failure it raises
is recorded against that plugin (the registry then drops the plugin and calls the hooks again
without it: one broken plugin never costs the others their components).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Generator
from typing import Any

import pluggy

from .._core._errors import PluginError
from .hookspecs import hookimpl

__all__ = ["Attribution", "attributed"]


class Attribution:
    """Which plugin's hook implementation is running, and which plugins' implementations failed."""

    def __init__(self) -> None:
        self._running: list[str] = []
        self.failures: dict[str, BaseException] = {}

    @property
    def current(self) -> str | None:
        """The plugin whose implementation is running (the innermost one), or ``None``."""
        return self._running[-1] if self._running else None

    def enter(self, plugin: str) -> None:
        self._running.append(plugin)

    def leave(self, plugin: str) -> None:
        # Innermost first as pluggy runs them; the last occurrence in any case.
        for i in range(len(self._running) - 1, -1, -1):
            if self._running[i] == plugin:
                del self._running[i]
                return

    def blame(self, plugin: str, error: BaseException) -> None:
        """Record ``error`` against ``plugin``, unless it comes from a failure already recorded.

        A wrapper that lets another plugin's failure pass through it, or raises its own error
        from it (chained), is not at fault.
        """
        if not self._recorded(error):
            self.failures.setdefault(plugin, error)

    def _recorded(self, error: BaseException) -> bool:
        known = {id(e) for e in self.failures.values()}
        seen: set[int] = set()
        todo: list[BaseException | None] = [error]
        while todo:
            e = todo.pop()
            if e is None or id(e) in seen:
                continue
            if id(e) in known:
                return True
            seen.add(id(e))
            todo += [e.__cause__, e.__context__]
        return False


class _Attributed:
    """A plugin as pluggy sees it: its hook implementations, each run under the plugin's name."""

    def __init__(self, name: str, plugin: object) -> None:
        self._graphfuse_name = name
        self._graphfuse_plugin = plugin

    def __repr__(self) -> str:
        return f"<graphfuse plugin {self._graphfuse_name!r}: {self._graphfuse_plugin!r}>"


def attributed(pm: pluggy.PluginManager, plugin: object, name: str, attribution: Attribution) -> object:
    """A stand-in for ``plugin`` to register with ``pm``: its hook implementations with their
    options (``wrapper``, ``hookwrapper``, ``tryfirst``, ``trylast``, ``specname``,
    ``optionalhook``) and signatures, each running under ``name`` in ``attribution``."""
    stand_in = _Attributed(name, plugin)
    for attribute in dir(plugin):
        options = pm.parse_hookimpl_opts(plugin, attribute)
        if options is None:
            continue
        function = getattr(plugin, attribute)
        if inspect.isgeneratorfunction(function):
            wrapped = _generator(function, name, attribution)
        else:
            wrapped = _function(function, name, attribution)
        setattr(stand_in, attribute, hookimpl(**options)(wrapped))
    return stand_in


def _function(function: Callable[..., Any], plugin: str, attribution: Attribution) -> Callable[..., Any]:
    # functools.wraps: pluggy reads the argument names through __wrapped__.
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        attribution.enter(plugin)
        try:
            return function(*args, **kwargs)
        except Exception as exc:
            attribution.blame(plugin, exc)
            raise
        finally:
            attribution.leave(plugin)

    return call


def _generator(
    function: Callable[..., Generator[Any, Any, Any]], plugin: str, attribution: Attribution
) -> Callable[..., Generator[Any, Any, Any]]:
    """A hook wrapper (either style) run step by step under ``plugin``.

    Its code before the ``yield`` runs under ``plugin``; the other implementations then run
    under their own names; what pluggy sends back (new style: the result, old style: a
    ``Result``) or throws in (another implementation's failure) is passed on, and the code after
    the ``yield`` runs under ``plugin`` again.
    """

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        attribution.enter(plugin)
        thrown: BaseException | None = None
        try:
            steps = function(*args, **kwargs)
            try:
                first = next(steps)
            except StopIteration:
                raise PluginError(
                    f"plugin {plugin!r}: hook wrapper {function.__name__} returned without yielding"
                ) from None
            try:
                sent = yield first
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:  # another implementation failed: the wrapper may handle it
                thrown = exc
                try:
                    steps.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    steps.send(sent)
                except StopIteration as stop:
                    return stop.value
            steps.close()
            raise PluginError(f"plugin {plugin!r}: hook wrapper {function.__name__} yielded more than once")
        except Exception as exc:
            if exc is not thrown:
                attribution.blame(plugin, exc)
            raise
        finally:
            attribution.leave(plugin)

    return call
