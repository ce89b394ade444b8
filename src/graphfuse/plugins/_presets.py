"""A catalogue entry for a preset: its factory and what it declares it needs."""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .._core._errors import InvalidInput, PluginError

__all__ = ["INPUTS", "Preset"]

INPUTS: tuple[str, ...] = ("graph_store", "vector_store", "embedder", "reranker", "corpus_indexes")
"""What a preset may declare it needs or uses.

``graph_store``, ``vector_store``, ``embedder`` and ``reranker`` are components passed by those
keywords; ``corpus_indexes`` is the corpus-wide BM25 index and title linker, passed as ``bm25=``
and, to a factory that takes it, ``linker=`` (:func:`graphfuse.presets.abuild` builds them from a
graph store that can list its documents, :class:`graphfuse.DocumentListing`), plus ``timeline=``
(the documents' creation times) for a factory that takes one.
"""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")


def _inputs(value: Iterable[str], what: str, name: str) -> frozenset[str]:
    if isinstance(value, str):
        value = (value,)
    try:
        items = frozenset(value)
    except TypeError as exc:
        raise InvalidInput(f"preset {name!r}: {what} must be a list of input names, got {value!r}") from exc
    unknown = sorted(i for i in items if i not in INPUTS)
    if unknown:
        raise InvalidInput(f"preset {name!r}: unknown {what} {unknown}; inputs are: {', '.join(INPUTS)}")
    return items


@dataclass(frozen=True)
class Preset:
    """One named pipeline of the preset catalogue (:mod:`graphfuse.presets`).

    ``needs`` are the inputs the preset cannot be built without, ``uses`` the optional ones it
    takes when the host has them (both from :data:`INPUTS`); ``plugin`` is who registered it.
    """

    name: str
    target: Callable[..., Any] | str = field(repr=False)
    needs: frozenset[str] = frozenset()
    uses: frozenset[str] = frozenset()
    description: str = ""
    plugin: str = "application"
    _resolved: list[Callable[..., Any]] = field(default_factory=list, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def declare(
        cls,
        name: str,
        factory: Callable[..., Any] | str,
        *,
        needs: Iterable[str] = (),
        uses: Iterable[str] = (),
        description: str = "",
        plugin: str = "application",
    ) -> Preset:
        """Validate a declaration (raises :class:`~graphfuse.InvalidInput` naming what is wrong)."""
        if not isinstance(name, str) or not _NAME.match(name):
            raise InvalidInput(
                "preset name must be an identifier (letters, digits, '_' or '-', starting with a letter or '_'), "
                f"got {name!r}"
            )
        if isinstance(factory, str):
            if factory.count(":") != 1 or not all(factory.split(":")):
                raise InvalidInput(f"preset {name!r}: a factory string must be 'module:attribute', got {factory!r}")
        elif not callable(factory):
            raise InvalidInput(f"preset factory for {name!r} must be callable or 'module:attribute', got {factory!r}")
        need, use = _inputs(needs, "needs", name), _inputs(uses, "uses", name)
        if need & use:
            raise InvalidInput(f"preset {name!r}: {sorted(need & use)} cannot be both needed and used")
        if not isinstance(description, str):
            raise InvalidInput(f"preset {name!r}: description must be a string")
        return cls(name, factory, need, use, description, plugin)

    @property
    def inputs(self) -> frozenset[str]:
        """``needs | uses``: every input the factory accepts."""
        return self.needs | self.uses

    def factory(self) -> Callable[..., Any]:
        """The factory, importing a ``"module:attribute"`` target on first use."""
        if not isinstance(self.target, str):
            return self.target
        with self._lock:
            if not self._resolved:
                module, _, attribute = self.target.partition(":")
                try:
                    found = getattr(importlib.import_module(module), attribute)
                except (ImportError, AttributeError) as exc:
                    raise PluginError(
                        f"preset {self.name!r} from plugin {self.plugin!r}: cannot import {self.target!r} ({exc})"
                    ) from exc
                if not callable(found):
                    raise PluginError(f"preset {self.name!r}: {self.target!r} is not callable")
                self._resolved.append(found)
            return self._resolved[0]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (``graphfuse plugins``)."""
        return {
            "name": self.name,
            "needs": sorted(self.needs),
            "uses": sorted(self.uses),
            "description": self.description,
            "plugin": self.plugin,
        }
