"""Lazy public names for plugin packages, so loading a plugin does not import its SDK."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module

__all__ = ["lazy_exports"]


def lazy_exports(package: str, sources: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Return a package's ``(__getattr__, __dir__)`` that import each public name on first access.

    ``sources`` maps a public name to the (relative) module defining it. Bind the pair only
    outside ``TYPE_CHECKING``, and import the names under ``if TYPE_CHECKING:`` for type
    checkers: a module ``__getattr__`` they can see would make them accept any name::

        if TYPE_CHECKING:
            from ._store import MyStore

        __all__ = ["MyStore"]

        if not TYPE_CHECKING:
            __getattr__, __dir__ = lazy_exports(__name__, {"MyStore": "._store"})
    """
    names = dict(sources)

    def __getattr__(name: str) -> object:
        source = names.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(source, package), name)
        vars(sys.modules[package])[name] = value  # later lookups find it without coming back here
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
